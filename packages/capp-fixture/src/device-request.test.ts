import { describe, expect, test } from '@jest/globals';
import type { Cluster, Machine, PacketCluster, PacketMachine } from '@metal-l2/api';
import {
  createDeviceInput,
  defaultCreateTags,
  deviceTags,
  hasAllTags,
  ipxeConflict,
  nodeAddresses,
  userDataValues,
} from './device-request.js';

const machine = (labels: Record<string, string> = {}): Machine => ({
  metadata: { name: 'm1', namespace: 'ns', labels },
  spec: {
    clusterName: 'c1',
    version: 'v1.30.1',
    bootstrap: { dataSecretName: 'm1' },
    infrastructureRef: { kind: 'PacketMachine', name: 'm1' },
  },
});
const packetCluster = (spec: Partial<PacketCluster['spec']> = {}, annotations: Record<string, string> = {}): PacketCluster => ({
  metadata: { name: 'c1', namespace: 'ns', annotations },
  spec: { projectID: 'p1', metro: 'da', ...spec },
});
const packetMachine = (spec: Partial<PacketMachine['spec']> = {}): PacketMachine => ({
  metadata: { name: 'pm1', namespace: 'ns' },
  spec: { machineType: 'c3.small.x86', os: 'ubuntu_22_04', ...spec },
});
const cluster: Cluster = { metadata: { name: 'c1' }, spec: { controlPlaneEndpoint: { host: '10.0.0.1', port: 6443 } } };

describe('tags', () => {
  test('default tags name cluster, Machine and namespace; the role tag follows; spec tags are not copied', () => {
    const tags = defaultCreateTags({ namespace: 'ns', machineName: 'm1', clusterName: 'c1' });
    expect(tags).toEqual(['capp:cluster-id:c1', 'capp:machine-uid:m1', 'capp:namespace:ns']);
    expect(deviceTags(tags, false)).toEqual([...tags, 'kubernetes.io/role:node']);
    expect(deviceTags(tags, true)).toEqual([...tags, 'kubernetes.io/role:master']);
  });

  test.each([
    { name: 'all tags present among others', tags: ['x', 'a', 'b'], want: true },
    { name: 'one tag missing', tags: ['a'], want: false },
    { name: 'no tags at all', tags: undefined, want: false },
  ])('hasAllTags: $name', ({ tags, want }) => {
    expect(hasAllTags(tags === undefined ? {} : { tags }, ['a', 'b'])).toBe(want);
  });
});

describe('userDataValues', () => {
  test.each<{ name: string; labels: Record<string, string>; pc: PacketCluster; reservation?: string; want: Record<string, string> }>([
    { name: 'a worker gets the version only', labels: {}, pc: packetCluster(), want: { kubernetesVersion: 'v1.30.1' } },
    {
      name: 'a CPEM control plane gets the token and the address of the cluster reservation, not the PacketCluster endpoint',
      labels: { 'cluster.x-k8s.io/control-plane': '' },
      pc: packetCluster({ vipManager: 'CPEM', controlPlaneEndpoint: { host: '147.75.1.1', port: 6443 } }),
      reservation: '147.75.9.9',
      want: { kubernetesVersion: 'v1.30.1', apiKey: 'tok', controlPlaneEndpoint: '147.75.9.9' },
    },
    {
      name: 'a control plane whose reservation has no address gets no controlPlaneEndpoint key',
      labels: { 'cluster.x-k8s.io/control-plane': '' },
      pc: packetCluster({ vipManager: 'KUBE_VIP' }),
      reservation: '',
      want: { kubernetesVersion: 'v1.30.1', apiKey: 'tok' },
    },
    {
      name: 'an EMLB control plane gets the Cluster endpoint, cpemConfig and the load balancer id',
      labels: { 'cluster.x-k8s.io/control-plane': '' },
      pc: packetCluster({ vipManager: 'EMLB' }, { 'equinix.com/loadbalancerID': 'lb-1' }),
      want: { kubernetesVersion: 'v1.30.1', apiKey: 'tok', controlPlaneEndpoint: '10.0.0.1', cpemConfig: 'emlb:///da', emlbID: 'lb-1' },
    },
  ])('$name', ({ labels, pc, reservation, want }) => {
    const m = machine(labels);
    const isControlPlane = 'cluster.x-k8s.io/control-plane' in labels;
    const values = userDataValues({
      machine: m,
      isControlPlane,
      token: 'tok',
      cluster,
      packetCluster: pc,
      ...(reservation === undefined ? {} : { reservationAddress: reservation }),
    });
    expect(values).toEqual(want);
  });
});

describe('createDeviceInput', () => {
  test('takes the PacketCluster metro when the machine sets none, and sends what CAPP sends', () => {
    expect(
      createDeviceInput({
        packetMachine: packetMachine({ billingCycle: 'hourly' }),
        packetCluster: packetCluster(),
        tags: ['t'],
        userdata: 'u',
      }),
    ).toEqual({
      hostname: 'pm1',
      metro: 'da',
      plan: 'c3.small.x86',
      operating_system: 'ubuntu_22_04',
      billing_cycle: 'hourly',
      ipxe_script_url: '',
      tags: ['t'],
      userdata: 'u',
    });
  });

  test('an unset billing cycle and iPXE URL go out as empty strings, an unknown billing cycle as it is: the API judges them', () => {
    const body = (pm: PacketMachine) => createDeviceInput({ packetMachine: pm, packetCluster: packetCluster(), tags: [], userdata: '' });
    expect(body(packetMachine())).toMatchObject({ billing_cycle: '', ipxe_script_url: '' });
    expect(Object.keys(body(packetMachine()))).toEqual(
      expect.arrayContaining(['hostname', 'metro', 'billing_cycle', 'plan', 'operating_system', 'ipxe_script_url', 'tags', 'userdata']),
    );
    expect(body(packetMachine({ billingCycle: 'weekly' })).billing_cycle).toBe('weekly');
  });

  test('a machine metro wins over the cluster one', () => {
    expect(
      createDeviceInput({ packetMachine: packetMachine({ metro: 'sv' }), packetCluster: packetCluster(), tags: [], userdata: '' }).metro,
    ).toBe('sv');
  });

  test('refuses a facility (the simulator places devices in metros only)', () => {
    const pm = packetMachine({ facility: 'da11' });
    expect(() => createDeviceInput({ packetMachine: pm, packetCluster: packetCluster(), tags: [], userdata: '' })).toThrow(/facility da11/);
  });

  test('an iPXE URL needs the custom_ipxe OS', () => {
    expect(ipxeConflict(packetMachine({ ipxeURL: 'http://x' }))).toMatch(/custom_pxe/);
    expect(ipxeConflict(packetMachine({ ipxeURL: 'http://x', os: 'custom_ipxe' }))).toBeUndefined();
  });
});

test('nodeAddresses: public addresses are external, the others internal', () => {
  expect(
    nodeAddresses({
      ip_addresses: [
        { address: '147.75.0.3', public: true },
        { address: '10.64.0.3', public: false },
      ],
    }),
  ).toEqual([
    { type: 'ExternalIP', address: '147.75.0.3' },
    { type: 'InternalIP', address: '10.64.0.3' },
  ]);
});
