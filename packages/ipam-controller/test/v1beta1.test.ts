import { beforeAll, describe, expect, test } from '@jest/globals';
import { type Objects, claimObject, kinds, poolObject, readyCondition, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { boundAddress, expectUnallocated, sentinelBound } from './support/claims.js';
import { runController } from './support/running-controller.js';
import { useIpamNamespace } from './support/ipam-namespace.js';

// A CAPP-era management cluster: CAPI v1.7.9 serves IPAM v1beta1 only, and its claims have no
// spec.clusterName (the cluster-name label links them). The controller discovers that and adapts.
const space = useIpamNamespace('ipam-v1beta1', { privateControlPlane: 'ipam-v1beta1', capi: 'capiV1_7' });
let objects: Objects;
let ns = '';
const claimKind = kinds.claim('v1beta1');
const site = () => ({ objects, namespace: ns, version: 'v1beta1' });
const bound = (name: string): Promise<Obj> => boundAddress(site(), name);

beforeAll(async () => {
  ({ objects, ns } = space);
  space.stopAfterAll(await runController(space.kc, ns));
});

describe('IPAM v1beta1 (CAPI v1.7.9)', () => {
  test('a claim binds, with v1beta1 owner references and a v1beta1 Ready condition', async () => {
    await objects.create(kinds.pool, poolObject('old', { addresses: ['10.50.0.10-10.50.0.20'], prefix: 24, gateway: '10.50.0.1' }, ns));
    const claim = await objects.create(claimKind, claimObject('old-1', ns, { pool: 'old' }));
    const address = await bound('old-1');
    expect(address.spec).toEqual({
      address: '10.50.0.10',
      prefix: 24,
      gateway: '10.50.0.1',
      claimRef: { name: 'old-1' },
      poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'old' },
    });
    expect(address.metadata.ownerReferences).toContainEqual({
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta1',
      kind: 'IPAddressClaim',
      name: 'old-1',
      uid: claim.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    });
    const after = await objects.get(claimKind, 'old-1', ns);
    expect(readyCondition(after)).toMatchObject({ status: 'True', reason: 'AddressAllocated' });
  });

  test('the cluster-name label pauses a claim with its Cluster (no spec.clusterName in v1.7)', async () => {
    await objects.create(kinds.cluster('v1beta1'), { metadata: { name: 'c', namespace: ns }, spec: { paused: true } });
    await objects.create(claimKind, claimObject('old-2', ns, { pool: 'old', labels: { 'cluster.x-k8s.io/cluster-name': 'c' } }));
    // A claim linked to an unpaused Cluster, both created after, is bound: that pass had old-2 and c in view.
    await expectUnallocated(site(), await sentinelBound(site(), { pool: 'old', name: 'old-sentinel', linkCluster: 'label' }), 'old-2');
    await objects.patch(kinds.cluster('v1beta1'), 'c', ns, { spec: { paused: false } });
    expect((await bound('old-2')).metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'c' });
  });

  test('an exhausted claim gets a False Ready condition with a severity, as v1beta1 conditions have', async () => {
    await objects.create(kinds.pool, poolObject('tiny', { addresses: ['10.51.0.10'], prefix: 24 }, ns));
    await objects.create(claimKind, claimObject('tiny-1', ns, { pool: 'tiny' }));
    await bound('tiny-1');
    await objects.create(claimKind, claimObject('tiny-2', ns, { pool: 'tiny' }));
    const ready = await waitFor(
      'tiny-2 exhausted',
      async () => {
        const c: { reason?: string; severity?: string } | undefined = readyCondition(await objects.get(claimKind, 'tiny-2', ns));
        return c?.reason === 'PoolExhausted' ? c : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    expect(ready.severity).toBe('Warning');
  });
});
