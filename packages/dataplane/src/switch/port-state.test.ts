import { describe, expect, test } from '@jest/globals';
import { PUBLIC_SEGMENT } from './forwarding.js';
import { switchPortConfig, type MetalNetworkState, type MetalPortState, type PortConfig } from './port-state.js';

const vlans = new Map([
  ['v1000', { vxlan: 1000 }],
  ['v1001', { vxlan: 1001 }],
]);

function port(p: Partial<MetalPortState> & Pick<MetalPortState, 'id' | 'name' | 'kind'>): MetalPortState {
  return { deviceId: 'd', bondName: 'bond0', mac: undefined, bonded: true, layer2: false, vlans: [], nativeVlanId: undefined, ...p };
}

function device(bond: Partial<MetalPortState>, eth0: Partial<MetalPortState> = {}, eth1: Partial<MetalPortState> = {}): MetalNetworkState {
  const ports = [
    port({ id: 'bond0', name: 'bond0', kind: 'bond', ...bond }),
    port({ id: 'eth0', name: 'eth0', kind: 'physical', mac: '02:00:00:00:00:01', ...eth0 }),
    port({ id: 'eth1', name: 'eth1', kind: 'physical', mac: '02:00:00:00:00:02', ...eth1 }),
  ];
  return { ports: new Map(ports.map((p) => [p.id, p])), vlans };
}

const cases: { name: string; state: MetalNetworkState; portId: string; want: PortConfig | undefined }[] = [
  {
    name: 'layer3: a bond member is on the public segment in the bond LAG',
    state: device({}),
    portId: 'eth0',
    want: { id: 'eth0', group: 'bond0', untagged: PUBLIC_SEGMENT, tagged: [] },
  },
  {
    name: 'hybrid-bonded: the bond VLANs are tagged on every member',
    state: device({ vlans: [{ vlanId: 'v1001' }, { vlanId: 'v1000' }] }),
    portId: 'eth1',
    want: { id: 'eth1', group: 'bond0', untagged: PUBLIC_SEGMENT, tagged: [1000, 1001] },
  },
  {
    name: 'layer2-bonded with a native VLAN: untagged frames are the native VLAN',
    state: device({ layer2: true, vlans: [{ vlanId: 'v1000' }, { vlanId: 'v1001' }], nativeVlanId: 'v1000' }),
    portId: 'eth0',
    want: { id: 'eth0', group: 'bond0', untagged: 1000, tagged: [1000, 1001] },
  },
  {
    name: 'layer2-bonded without a native VLAN drops untagged frames',
    state: device({ layer2: true, vlans: [{ vlanId: 'v1000' }] }),
    portId: 'eth0',
    want: { id: 'eth0', group: 'bond0', untagged: undefined, tagged: [1000] },
  },
  {
    name: 'hybrid: eth1 out of the bond is its own group with its own VLANs',
    state: device({}, {}, { bonded: false, vlans: [{ vlanId: 'v1001' }], nativeVlanId: 'v1001' }),
    portId: 'eth1',
    want: { id: 'eth1', group: 'eth1', untagged: 1001, tagged: [1001] },
  },
  {
    name: 'layer2-individual: eth0 keeps only its own VLANs, not the public segment',
    state: device({ layer2: true }, { bonded: false, vlans: [{ vlanId: 'v1000' }] }, { bonded: false }),
    portId: 'eth0',
    want: { id: 'eth0', group: 'eth0', untagged: undefined, tagged: [1000] },
  },
  { name: 'a bond port is no switch port', state: device({}), portId: 'bond0', want: undefined },
  { name: 'a port that is gone (device deleted) is no switch port', state: device({}), portId: 'eth9', want: undefined },
];

describe('switchPortConfig', () => {
  test.each(cases)('$name', ({ state, portId, want }) => {
    expect(switchPortConfig(state, portId)).toEqual(want);
  });
});
