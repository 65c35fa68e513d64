import { describe, expect, test } from '@jest/globals';
import type { IPAddress, IPAddressBlock, IPAddressClaim } from '@metal-l2/api';
import { viewClaim } from './claim/claim-contract.js';
import { shapeAddress, shapeBlock, shapeClaim, type ClaimNames } from './cache-transform.js';

/**
 * A name as the API server sends it: a fresh string each time it occurs in the JSON. (Strings
 * equal in value cannot be told apart in JavaScript: the tests check which name is asked for.)
 */
const NAME = `${'c'.repeat(250)}-1`;
const fresh = (): string => JSON.parse(JSON.stringify(NAME)) as string;

function claim(): IPAddressClaim {
  return {
    apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
    kind: 'IPAddressClaim',
    metadata: {
      name: fresh(),
      namespace: 'ns',
      uid: 'u1',
      resourceVersion: '7',
      generation: 2,
      creationTimestamp: '2026-12-05T05:00:00Z',
      finalizers: ['ipam.metal.x-k8s.io/ReleaseAddress', 'other/hold'],
      labels: { 'cluster.x-k8s.io/cluster-name': 'c1', team: 'a' },
      annotations: { 'ipam.metal.x-k8s.io/requested-address': '10.0.0.9', 'cluster.x-k8s.io/paused': '', note: 'x' },
      ownerReferences: [
        { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'c1', uid: 'cu' },
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'x' },
      ],
    },
    spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'p' }, clusterName: 'c1' },
    status: {
      addressRef: { name: fresh() },
      conditions: [{ type: 'Ready', status: 'True', reason: 'AddressAllocated', message: 'm', lastTransitionTime: 't' }],
    },
  };
}

describe('what the caches keep', () => {
  test('a claim keeps what its view, status and finalizer writes read; its addressRef shares its name', () => {
    const original = claim();
    const shaped = shapeClaim(claim());
    expect(viewClaim(shaped)).toEqual({ ...viewClaim(original), object: shaped });
    expect(shaped.metadata).toEqual({
      name: NAME,
      namespace: 'ns',
      uid: 'u1',
      resourceVersion: '7',
      generation: 2,
      finalizers: ['ipam.metal.x-k8s.io/ReleaseAddress', 'other/hold'],
      labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
      annotations: { 'ipam.metal.x-k8s.io/requested-address': '10.0.0.9', 'cluster.x-k8s.io/paused': '' },
      ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'c1', uid: 'cu' }],
    });
    expect(shaped.spec).toEqual(original.spec);
    expect(shaped.status).toEqual(original.status);
  });

  test('a claim without labels, annotations, owners or status has none of them cached', () => {
    const bare = shapeClaim({ metadata: { name: 'a', namespace: 'ns' }, spec: { poolRef: { kind: 'InClusterIPPool', name: 'p' } } });
    expect(bare).toEqual({ metadata: { name: 'a', namespace: 'ns' }, spec: { poolRef: { kind: 'InClusterIPPool', name: 'p' } } });
  });

  test("an IPAddress and a block entry share the cached claim's name", () => {
    const cachedClaim = shapeClaim(claim());
    const asked: string[] = [];
    const names: ClaimNames = (key) => {
      asked.push(`${key.namespace ?? ''}/${key.name}`);
      return key.namespace === 'ns' && key.name === NAME ? cachedClaim.metadata.name : undefined;
    };
    const address: IPAddress = {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddress',
      metadata: {
        name: fresh(),
        namespace: 'ns',
        uid: 'a1',
        resourceVersion: '9',
        labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
        finalizers: ['ipam.metal.x-k8s.io/ProtectAddress'],
        ownerReferences: [
          { apiVersion: 'ipam.cluster.x-k8s.io/v1beta2', kind: 'IPAddressClaim', name: fresh(), uid: 'u1', controller: true },
          { apiVersion: 'ipam.metal.x-k8s.io/v1alpha1', kind: 'InClusterIPPool', name: 'p', uid: 'pu', controller: false },
        ],
      },
      spec: {
        address: '10.0.0.2',
        prefix: 24,
        claimRef: { name: fresh() },
        poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'p' },
      },
    };
    const shaped = shapeAddress(names)(address);
    expect(shaped.spec).toEqual(address.spec);
    expect(shaped.metadata.ownerReferences).toEqual([address.metadata.ownerReferences?.[0]]);
    expect(shaped.metadata.labels).toBeUndefined();
    expect(asked).toEqual([`ns/${NAME}`]);

    const block: IPAddressBlock = {
      metadata: { name: 'b', namespace: 'ns' },
      spec: { poolRef: { kind: 'InClusterIPPool', name: 'p', namespace: 'ns', uid: 'pu' }, cidr: '10.0.0.0/24' },
      status: { allocations: { '10.0.0.2': fresh(), '10.0.0.3': 'other', '10.0.0.4': `${fresh()}@2026-12-05T05:00:00Z` } },
    };
    const before = { ...block.status?.allocations };
    const shapedBlock = shapeBlock(names)(block);
    expect(shapedBlock.status?.allocations).toEqual(before);
    // Released entries (`name@time`) name no live claim as-is: not looked up.
    expect(asked).toEqual([`ns/${NAME}`, `ns/${NAME}`, 'ns/other']);
  });
});
