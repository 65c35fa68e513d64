import { describe, expect, test } from '@jest/globals';
import {
  apiDevice,
  desiredPorts,
  HYBRID,
  HYBRID_BONDED,
  LAYER2_BONDED,
  LAYER2_INDIVIDUAL,
  LAYER3,
  PROJECT_VLANS,
} from '../testing/ports.js';
import type { DeviceOptions, DeviceSketch } from '../testing/ports.js';
import { describePortCall } from './plan.js';
import type { NetworkType } from './port-layout.js';
import { planPortChanges } from './plan.js';
import type { PortPlan } from './plan.js';

function plan(from: DeviceSketch, to: DeviceSketch, options: DeviceOptions = {}): PortPlan {
  return planPortChanges({ device: apiDevice(from, options), desired: desiredPorts(to), virtualNetworks: PROJECT_VLANS });
}

function callsOf(result: PortPlan): string[] {
  if (result.kind !== 'planned') throw new Error(`refused: ${result.issues.map((i) => i.message).join('; ')}`);
  return result.calls.map(describePortCall);
}

const TYPES: Record<NetworkType, DeviceSketch> = {
  layer3: LAYER3,
  'hybrid-bonded': HYBRID_BONDED,
  hybrid: HYBRID,
  'layer2-bonded': LAYER2_BONDED,
  'layer2-individual': LAYER2_INDIVIDUAL,
};

// Every network type to every other, with the calls in order. VLANs: hybrid-bonded has 1000 on
// bond0; hybrid has 1001 on eth1; layer2-bonded has 1000 and 1001 on bond0; layer2-individual has
// 1000 on eth0 and 1001 on eth1.
const transitions: { name: string; from: NetworkType; to: NetworkType; calls: string[] }[] = [
  {
    name: 'layer3 to hybrid-bonded only assigns the VLAN to bond0',
    from: 'layer3',
    to: 'hybrid-bonded',
    calls: ['createPortVlanAssignmentBatch bond0 +1000'],
  },
  {
    name: 'layer3 to hybrid takes eth1 out of the bond, then assigns',
    from: 'layer3',
    to: 'hybrid',
    calls: ['disbondPort eth1', 'createPortVlanAssignmentBatch eth1 +1001'],
  },
  {
    name: 'layer3 to layer2-bonded converts, then assigns',
    from: 'layer3',
    to: 'layer2-bonded',
    calls: ['convertLayer2 bond0', 'createPortVlanAssignmentBatch bond0 +1000 +1001'],
  },
  {
    name: 'layer3 to layer2-individual converts before it disbonds in bulk',
    from: 'layer3',
    to: 'layer2-individual',
    calls: [
      'convertLayer2 bond0',
      'disbondPort bond0 bulk',
      'createPortVlanAssignmentBatch eth0 +1000',
      'createPortVlanAssignmentBatch eth1 +1001',
    ],
  },
  {
    name: 'hybrid-bonded to layer3 only unassigns',
    from: 'hybrid-bonded',
    to: 'layer3',
    calls: ['createPortVlanAssignmentBatch bond0 -1000'],
  },
  {
    name: 'hybrid-bonded to hybrid moves the VLANs from bond0 to eth1',
    from: 'hybrid-bonded',
    to: 'hybrid',
    calls: ['createPortVlanAssignmentBatch bond0 -1000', 'disbondPort eth1', 'createPortVlanAssignmentBatch eth1 +1001'],
  },
  {
    name: 'hybrid-bonded to layer2-bonded keeps the VLAN through the conversion',
    from: 'hybrid-bonded',
    to: 'layer2-bonded',
    calls: ['convertLayer2 bond0', 'createPortVlanAssignmentBatch bond0 +1001'],
  },
  {
    name: 'hybrid-bonded to layer2-individual empties bond0 before disbonding it',
    from: 'hybrid-bonded',
    to: 'layer2-individual',
    calls: [
      'createPortVlanAssignmentBatch bond0 -1000',
      'convertLayer2 bond0',
      'disbondPort bond0 bulk',
      'createPortVlanAssignmentBatch eth0 +1000',
      'createPortVlanAssignmentBatch eth1 +1001',
    ],
  },
  {
    name: 'hybrid to layer3 empties eth1 and bonds it back',
    from: 'hybrid',
    to: 'layer3',
    calls: ['createPortVlanAssignmentBatch eth1 -1001', 'bondPort eth1'],
  },
  {
    name: 'hybrid to hybrid-bonded bonds eth1 back, then assigns to bond0',
    from: 'hybrid',
    to: 'hybrid-bonded',
    calls: ['createPortVlanAssignmentBatch eth1 -1001', 'bondPort eth1', 'createPortVlanAssignmentBatch bond0 +1000'],
  },
  {
    name: 'hybrid to layer2-bonded converts, then bonds eth1 back',
    from: 'hybrid',
    to: 'layer2-bonded',
    calls: [
      'createPortVlanAssignmentBatch eth1 -1001',
      'convertLayer2 bond0',
      'bondPort eth1',
      'createPortVlanAssignmentBatch bond0 +1000 +1001',
    ],
  },
  {
    name: 'hybrid to layer2-individual converts, then takes eth0 out too',
    from: 'hybrid',
    to: 'layer2-individual',
    calls: ['convertLayer2 bond0', 'disbondPort eth0', 'createPortVlanAssignmentBatch eth0 +1000'],
  },
  {
    name: 'layer2-bonded to layer3 unassigns everything before converting',
    from: 'layer2-bonded',
    to: 'layer3',
    calls: ['createPortVlanAssignmentBatch bond0 -1000 -1001', 'convertLayer3 bond0'],
  },
  {
    name: 'layer2-bonded to hybrid-bonded unassigns, converts and assigns again',
    from: 'layer2-bonded',
    to: 'hybrid-bonded',
    calls: ['createPortVlanAssignmentBatch bond0 -1000 -1001', 'convertLayer3 bond0', 'createPortVlanAssignmentBatch bond0 +1000'],
  },
  {
    name: 'layer2-bonded to hybrid converts with eth1 bonded and takes it out afterwards',
    from: 'layer2-bonded',
    to: 'hybrid',
    calls: [
      'createPortVlanAssignmentBatch bond0 -1000 -1001',
      'convertLayer3 bond0',
      'disbondPort eth1',
      'createPortVlanAssignmentBatch eth1 +1001',
    ],
  },
  {
    name: 'layer2-bonded to layer2-individual moves the VLANs to the eth ports',
    from: 'layer2-bonded',
    to: 'layer2-individual',
    calls: [
      'createPortVlanAssignmentBatch bond0 -1000 -1001',
      'disbondPort bond0 bulk',
      'createPortVlanAssignmentBatch eth0 +1000',
      'createPortVlanAssignmentBatch eth1 +1001',
    ],
  },
  {
    name: 'layer2-individual to layer3 empties both ports, bonds in bulk and converts',
    from: 'layer2-individual',
    to: 'layer3',
    calls: [
      'createPortVlanAssignmentBatch eth0 -1000',
      'createPortVlanAssignmentBatch eth1 -1001',
      'bondPort bond0 bulk',
      'convertLayer3 bond0',
    ],
  },
  {
    name: 'layer2-individual to hybrid-bonded converts, then assigns to bond0',
    from: 'layer2-individual',
    to: 'hybrid-bonded',
    calls: [
      'createPortVlanAssignmentBatch eth0 -1000',
      'createPortVlanAssignmentBatch eth1 -1001',
      'bondPort bond0 bulk',
      'convertLayer3 bond0',
      'createPortVlanAssignmentBatch bond0 +1000',
    ],
  },
  {
    name: 'layer2-individual to hybrid bonds everything for the conversion, then takes eth1 out again',
    from: 'layer2-individual',
    to: 'hybrid',
    calls: [
      'createPortVlanAssignmentBatch eth0 -1000',
      'createPortVlanAssignmentBatch eth1 -1001',
      'bondPort bond0 bulk',
      'convertLayer3 bond0',
      'disbondPort eth1',
      'createPortVlanAssignmentBatch eth1 +1001',
    ],
  },
  {
    name: 'layer2-individual to layer2-bonded bonds in bulk and moves the VLANs to bond0',
    from: 'layer2-individual',
    to: 'layer2-bonded',
    calls: [
      'createPortVlanAssignmentBatch eth0 -1000',
      'createPortVlanAssignmentBatch eth1 -1001',
      'bondPort bond0 bulk',
      'createPortVlanAssignmentBatch bond0 +1000 +1001',
    ],
  },
];

describe('planPortChanges: network type transitions', () => {
  test.each(transitions)('$name', ({ from, to, calls }) => {
    const result = plan(TYPES[from], TYPES[to]);
    expect(callsOf(result)).toEqual(calls);
    expect(result).toMatchObject({ kind: 'planned', from, to });
  });

  test('covers every ordered pair of different network types', () => {
    const pairs = new Set(transitions.map((t) => `${t.from}>${t.to}`));
    const types = Object.keys(TYPES);
    for (const from of types) for (const to of types) if (from !== to) expect(pairs).toContain(`${from}>${to}`);
  });

  test.each(Object.entries(TYPES))('%s to itself makes no call', (type, sketch) => {
    expect(plan(sketch, sketch)).toEqual({ kind: 'planned', calls: [], from: type, to: type });
  });
});

const cases: { name: string; from: DeviceSketch; to: DeviceSketch; options?: DeviceOptions; calls: string[] }[] = [
  {
    name: 'VLANs reported as bare links still match the desired VLANs',
    from: LAYER2_BONDED,
    to: LAYER2_BONDED,
    options: { vlansAsLinks: true },
    calls: [],
  },
  {
    name: 'swapping a VLAN on one port is one batch that removes and adds',
    from: { bond0: { vlans: [1000, 1001] } },
    to: { bond0: { vlans: [1001, 1002] } },
    calls: ['createPortVlanAssignmentBatch bond0 -1000 +1002'],
  },
  {
    name: 'VLAN order in the spec does not matter',
    from: { bond0: { vlans: [1000, 1001] } },
    to: { bond0: { vlans: [1001, 1000] } },
    calls: [],
  },
  {
    name: 'a native VLAN is set last, after its assignment',
    from: LAYER3,
    to: { bond0: { layer2: true, vlans: [1000, 1001], native: 1001 } },
    calls: ['convertLayer2 bond0', 'createPortVlanAssignmentBatch bond0 +1000 +1001', 'assignNativeVlan bond0 1001'],
  },
  {
    name: 'moving the native VLAN between kept VLANs is one call',
    from: { bond0: { layer2: true, vlans: [1000, 1001], native: 1000 } },
    to: { bond0: { layer2: true, vlans: [1000, 1001], native: 1001 } },
    calls: ['assignNativeVlan bond0 1001'],
  },
  {
    name: 'dropping the native setting but keeping the VLAN clears it at the end',
    from: { bond0: { layer2: true, vlans: [1000, 1001], native: 1000 } },
    to: { bond0: { layer2: true, vlans: [1000, 1001, 1002] } },
    calls: ['createPortVlanAssignmentBatch bond0 +1002', 'deleteNativeVlan bond0'],
  },
  {
    name: 'a native VLAN about to be unassigned is cleared first',
    from: { bond0: { layer2: true, vlans: [1000, 1001], native: 1000 } },
    to: { bond0: { layer2: true, vlans: [1001, 1002] } },
    calls: ['deleteNativeVlan bond0', 'createPortVlanAssignmentBatch bond0 -1000 +1002'],
  },
  {
    name: 'layer2-bonded with a native VLAN back to layer3 clears it before unassigning',
    from: { bond0: { layer2: true, vlans: [1000, 1001], native: 1000 } },
    to: LAYER3,
    calls: ['deleteNativeVlan bond0', 'createPortVlanAssignmentBatch bond0 -1000 -1001', 'convertLayer3 bond0'],
  },
  {
    name: 'hybrid with two VLANs and a native one on eth1',
    from: LAYER3,
    to: { eth1: { bonded: false, vlans: [1001, 1002], native: 1002 } },
    calls: ['disbondPort eth1', 'createPortVlanAssignmentBatch eth1 +1001 +1002', 'assignNativeVlan eth1 1002'],
  },
  {
    name: 'layer2-individual with different VLAN sets per port only touches the port that differs',
    from: LAYER2_INDIVIDUAL,
    to: { ...LAYER2_INDIVIDUAL, eth1: { bonded: false, vlans: [1001, 1003] } },
    calls: ['createPortVlanAssignmentBatch eth1 +1003'],
  },
  {
    name: 'physical ports not mentioned follow their disbonded bond',
    from: LAYER3,
    to: { bond0: { layer2: true, bonded: false } },
    calls: ['convertLayer2 bond0', 'disbondPort bond0 bulk'],
  },
  {
    name: 'a frozen device that already matches needs no call and is not refused',
    from: HYBRID_BONDED,
    to: HYBRID_BONDED,
    options: { networkFrozen: true },
    calls: [],
  },
  {
    name: '4-port device: bond1 goes to layer 2 while bond0 stays in layer 3',
    from: LAYER3,
    to: { bond1: { layer2: true, vlans: [1000] } },
    options: { portCount: 4 },
    calls: ['convertLayer2 bond1', 'createPortVlanAssignmentBatch bond1 +1000'],
  },
  {
    name: "4-port device: hybrid takes eth2 (bond0's second port) out",
    from: LAYER3,
    to: { eth2: { bonded: false, vlans: [1001] } },
    options: { portCount: 4 },
    calls: ['disbondPort eth2', 'createPortVlanAssignmentBatch eth2 +1001'],
  },
];

describe('planPortChanges: details', () => {
  test.each(cases)('$name', ({ from, to, options, calls }) => {
    expect(callsOf(plan(from, to, options))).toEqual(calls);
  });

  test('calls carry port ids, VLAN ids and the layer-3 address request', () => {
    const result = plan(LAYER2_BONDED, HYBRID_BONDED);
    expect(result.kind === 'planned' && result.calls).toEqual([
      {
        operation: 'createPortVlanAssignmentBatch',
        portId: 'port-bond0',
        portName: 'bond0',
        vlanAssignments: [
          { vlan: { id: 'vlan-da-1000', vxlan: 1000 }, state: 'unassigned' },
          { vlan: { id: 'vlan-da-1001', vxlan: 1001 }, state: 'unassigned' },
        ],
      },
      {
        operation: 'convertLayer3',
        portId: 'port-bond0',
        portName: 'bond0',
        requestIps: [
          { address_family: 4, public: true },
          { address_family: 4, public: false },
          { address_family: 6, public: true },
        ],
      },
      {
        operation: 'createPortVlanAssignmentBatch',
        portId: 'port-bond0',
        portName: 'bond0',
        vlanAssignments: [{ vlan: { id: 'vlan-da-1000', vxlan: 1000 }, state: 'assigned' }],
      },
    ]);
  });

  test('the metro can come from the input when the device does not include it', () => {
    const device = { ...apiDevice(LAYER3) };
    delete device.metro;
    const result = planPortChanges({ device, desired: desiredPorts(HYBRID_BONDED), virtualNetworks: PROJECT_VLANS, metro: 'DA' });
    expect(callsOf(result)).toEqual(['createPortVlanAssignmentBatch bond0 +1000']);
  });

  test('a VLAN is resolved in the device metro even when another metro has the same vxlan', () => {
    const result = plan(LAYER3, HYBRID_BONDED);
    expect(result.kind === 'planned' && result.calls[0]).toMatchObject({ vlanAssignments: [{ vlan: { id: 'vlan-da-1000' } }] });
  });
});
