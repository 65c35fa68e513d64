import { describe, expect, test } from '@jest/globals';
import type { Cluster, IPAddressClaim, Machine, MachineNetwork, PacketMachine } from '@metal-l2/api';
import type { ObjectKey } from '@metal-l2/kube';
import { IndexNames } from '../context.js';
import { addressUseOf } from './address-in-use.js';

// The rule deciding when an endpoint address may be given back, on plain objects: which
// MachineNetworks count as announcers, and when the Cluster itself holds the address.

const NS = 'n';
const VIP = '10.60.1.250';

/** Enough of an informer cache for the rule: get by key, the two indexes it reads. */
function cache<T extends { metadata: { name?: string; namespace?: string } }>(
  objects: readonly T[],
  indexes: Record<string, (o: T) => string[]> = {},
): { get(key: ObjectKey): T | undefined; byIndex(name: string, value: string): T[] } {
  return {
    get: (key) => objects.find((o) => o.metadata.name === key.name && o.metadata.namespace === key.namespace),
    byIndex: (name, value) => objects.filter((o) => indexes[name]?.(o).includes(value) === true),
  };
}

const cluster = (host: string, extra: Partial<Cluster['metadata']> = {}): Cluster => ({
  metadata: { name: 'e1', namespace: NS, uid: 'uid-1', ...extra },
  spec: { controlPlaneEndpoint: { host, port: 6443 } },
});
const claim: IPAddressClaim = {
  metadata: {
    name: 'e1-endpoint',
    namespace: NS,
    ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', name: 'e1', uid: 'uid-1', controller: true }],
  },
  spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'vip' } },
};
const mn = (name: string, userData: NonNullable<MachineNetwork['status']>['userData']): MachineNetwork => ({
  apiVersion: 'network.metal.x-k8s.io/v1alpha1',
  kind: 'MachineNetwork',
  metadata: { name, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'e1' } },
  spec: { templateName: 't', ports: [] },
  ...(userData === undefined ? {} : { status: { userData } }),
});
const machine = (name: string, controlPlane: boolean): Machine => ({
  metadata: { name, namespace: NS, labels: controlPlane ? { 'cluster.x-k8s.io/control-plane': '' } : {} },
  spec: { clusterName: 'e1', bootstrap: {}, infrastructureRef: { kind: 'PacketMachine', name } },
});
const announced = { address: VIP, prefix: 24, port: 6443, vxlan: 1000, virtualRouterID: 7 };

function useOf(at: { cluster: Cluster | undefined; mns: MachineNetwork[]; machines?: Machine[]; packetMachines?: PacketMachine[] }) {
  return addressUseOf(
    {
      clusters: cache(at.cluster === undefined ? [] : [at.cluster]),
      machineNetworks: cache(at.mns, {
        [IndexNames.machineNetworkByCluster]: (o) => [`${NS}/${o.metadata.labels?.['cluster.x-k8s.io/cluster-name'] ?? ''}`],
      }),
      machines: cache(at.machines ?? [], { [IndexNames.machineByInfraRef]: (o) => [`${NS}/${o.spec.infrastructureRef.name}`] }),
      packetMachines: cache(at.packetMachines ?? []),
    },
    { claim, clusterName: 'e1', address: VIP },
  );
}

describe('addressUseOf', () => {
  test('the Cluster running on the address holds it; another endpoint, another uid or a deleting Cluster does not', () => {
    expect(useOf({ cluster: cluster(VIP), mns: [] })).toMatchObject({ isClusterEndpoint: true, inUse: true });
    expect(useOf({ cluster: cluster('api.example.com'), mns: [] })).toMatchObject({ isClusterEndpoint: false, inUse: false });
    expect(useOf({ cluster: cluster(VIP, { uid: 'uid-2' }), mns: [] }).inUse).toBe(false);
    expect(useOf({ cluster: cluster(VIP, { deletionTimestamp: '2026-12-04T00:00:00Z' }), mns: [] }).inUse).toBe(false);
    expect(useOf({ cluster: undefined, mns: [] }).inUse).toBe(false);
  });

  test('a machine recorded as announcing the address holds it; one announcing another address does not', () => {
    const gone = cluster('api.example.com');
    expect(useOf({ cluster: gone, mns: [mn('cp-0', { hash: 'h', announcedEndpoint: announced })] })).toMatchObject({
      announcers: ['cp-0'],
      inUse: true,
    });
    expect(
      useOf({ cluster: gone, mns: [mn('cp-0', { hash: 'h', announcedEndpoint: { ...announced, address: '10.60.1.251' } })] }).inUse,
    ).toBe(false);
  });

  test('a control plane injected without a record counts (an older release may have given it the announcer); a worker, or a machine not injected, does not', () => {
    const gone = cluster('api.example.com');
    const mns = [mn('cp-0', { hash: 'h' }), mn('cp-1', { hash: 'h' }), mn('wk-0', { hash: 'h' }), mn('cp-2', undefined)];
    const machines = [machine('cp-0', true), machine('wk-0', false), machine('cp-2', true)];
    // cp-1 has no Machine any more; its PacketMachine carries the label KCP gives the infrastructure machines it clones.
    const packetMachines: PacketMachine[] = [
      { metadata: { name: 'cp-1', namespace: NS, labels: { 'cluster.x-k8s.io/control-plane': '' } }, spec: {} },
    ];
    expect(useOf({ cluster: gone, mns, machines, packetMachines }).announcers).toEqual(['cp-0', 'cp-1']);
  });

  test('a control plane whose record says what it was given (a fingerprint) and no endpoint announces nothing, so a rollout frees the address', () => {
    const gone = cluster('api.example.com');
    const mns = [mn('cp-new', { hash: 'h', rendererVersion: 1, fingerprint: 'f' }), mn('cp-filled', { hash: 'h', fingerprint: 'f' })];
    const machines = [machine('cp-new', true), machine('cp-filled', true)];
    expect(useOf({ cluster: gone, mns, machines })).toMatchObject({ announcers: [], inUse: false });
  });
});
