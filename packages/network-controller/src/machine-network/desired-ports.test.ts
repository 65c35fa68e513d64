import { describe, expect, test } from '@jest/globals';
import type { Port } from '@metal-l2/api';
import { desiredNetworkMode, desiredPorts } from './desired-ports.js';

const vlan = (vxlan: number, native = false): NonNullable<Port['vlans']>[number] => ({ vxlan, ...(native ? { native } : {}) });

describe('desiredNetworkMode', () => {
  test.each<[string, Port[], string | undefined]>([
    ['bond0 with a tagged VLAN is hybrid-bonded', [{ name: 'bond0', vlans: [vlan(1000)] }], 'hybrid-bonded'],
    ['eth1 out of the bond is hybrid', [{ name: 'eth1', bonded: false, vlans: [vlan(1000, true)] }], 'hybrid'],
    ['bond0 in layer 2 is layer2-bonded', [{ name: 'bond0', layer2: true, vlans: [vlan(1000, true), vlan(1001)] }], 'layer2-bonded'],
    [
      'bond0 in layer 2 unbonded is layer2-individual',
      [
        { name: 'bond0', layer2: true, bonded: false },
        { name: 'eth0', vlans: [vlan(1000)] },
        { name: 'eth1', vlans: [vlan(1000)] },
      ],
      'layer2-individual',
    ],
    ['nothing asked is layer3', [{ name: 'bond0' }], 'layer3'],
  ])('%s', (_name, ports, want) => {
    expect(desiredNetworkMode({ ports })).toBe(want);
  });
});

describe('desiredPorts', () => {
  test('names VLANs by vxlan and the native one; the planner fills in the defaults', () => {
    expect(
      desiredPorts({
        ports: [
          { name: 'bond0', vlans: [vlan(1000)] },
          { name: 'eth1', bonded: false, vlans: [vlan(1001, true)] },
        ],
      }),
    ).toEqual([
      { name: 'bond0', vlans: [1000] },
      { name: 'eth1', bonded: false, vlans: [1001], nativeVlan: 1001 },
    ]);
  });
});
