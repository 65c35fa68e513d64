import { describe, expect, test } from '@jest/globals';
import type { Cluster, Machine, OwnerReference } from '@metal-l2/api';
import { withControllerReference, withoutOnCreateOwners } from './machine-reconciler.js';

const machine = (labels: Record<string, string> = {}): Machine => ({
  metadata: { name: 'm1', namespace: 'ns', uid: 'uid-m1', labels },
  spec: { clusterName: 'c1', bootstrap: {}, infrastructureRef: { kind: 'PacketMachine', name: 'm1' } },
});
const cluster: Cluster = {
  metadata: { name: 'c1' },
  spec: { controlPlaneRef: { apiVersion: 'controlplane.cluster.x-k8s.io/v1beta1', kind: 'KubeadmControlPlane', name: 'kcp' } },
};
const ref = (apiVersion: string, kind: string, name: string, extra: Partial<OwnerReference> = {}): OwnerReference => ({
  apiVersion,
  kind,
  name,
  uid: `uid-${name}`,
  ...extra,
});
const machineSet = ref('cluster.x-k8s.io/v1beta1', 'MachineSet', 'ms');
const kcp = ref('controlplane.cluster.x-k8s.io/v1beta1', 'KubeadmControlPlane', 'kcp');
const other = ref('example.com/v1', 'Thing', 'thing');

describe('withoutOnCreateOwners', () => {
  test.each<{ name: string; labels: Record<string, string>; refs: OwnerReference[]; want: OwnerReference[] }>([
    { name: 'a worker loses its MachineSet owner, keeps the others', labels: {}, refs: [machineSet, other], want: [other] },
    { name: 'a worker keeps a control plane owner (only control-plane Machines drop it)', labels: {}, refs: [kcp], want: [kcp] },
    {
      name: 'a control-plane Machine drops the Cluster control plane owner',
      labels: { 'cluster.x-k8s.io/control-plane': '' },
      refs: [kcp, other],
      want: [other],
    },
  ])('$name', ({ labels, refs, want }) => {
    expect(withoutOnCreateOwners(refs, { cluster, machine: machine(labels) })).toEqual(want);
  });
});

describe('withControllerReference', () => {
  const owner = {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Machine',
    name: 'm1',
    uid: 'uid-m1',
    controller: true,
    blockOwnerDeletion: true,
  };

  test('adds the Machine as controller beside other owners', () => {
    expect(withControllerReference([other], { machine: machine(), apiVersion: 'cluster.x-k8s.io/v1beta1' })).toEqual([other, owner]);
  });

  test('replaces a reference to the same Machine in place', () => {
    const stale = ref('cluster.x-k8s.io/v1alpha4', 'Machine', 'm1');
    expect(withControllerReference([stale, other], { machine: machine(), apiVersion: 'cluster.x-k8s.io/v1beta1' })).toEqual([owner, other]);
  });

  test('refuses when another object is the controller', () => {
    expect(() =>
      withControllerReference([ref('cluster.x-k8s.io/v1beta1', 'Machine', 'm2', { controller: true })], {
        machine: machine(),
        apiVersion: 'cluster.x-k8s.io/v1beta1',
      }),
    ).toThrow(/already owned by another Machine controller m2/);
  });
});
