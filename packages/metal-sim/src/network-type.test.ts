import { describe, expect, test } from '@jest/globals';
import { bondNetworkType, deviceNetworkType, keepsLayer3 } from './network-type.js';

describe('bondNetworkType', () => {
  test.each([
    ['layer 3, all bonded, no VLANs', { layer2: false, membersBonded: [true, true], bondVlanCount: 0 }, 'layer3'],
    ['layer 3, all bonded, VLANs on the bond', { layer2: false, membersBonded: [true, true], bondVlanCount: 1 }, 'hybrid-bonded'],
    ['layer 3, eth1 out of the bond', { layer2: false, membersBonded: [true, false], bondVlanCount: 0 }, 'hybrid'],
    ['layer 2, all bonded', { layer2: true, membersBonded: [true, true], bondVlanCount: 2 }, 'layer2-bonded'],
    ['layer 2, ports out of the bond', { layer2: true, membersBonded: [false, false], bondVlanCount: 0 }, 'layer2-individual'],
  ] as const)('%s is %s', (_name, shape, want) => {
    expect(bondNetworkType(shape)).toBe(want);
  });

  test('only the layer-3 modes keep the metadata service', () => {
    expect(['layer3', 'hybrid', 'hybrid-bonded', 'layer2-bonded', 'layer2-individual'].map((t) => keepsLayer3(t as never))).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});

describe('deviceNetworkType', () => {
  const l3 = { layer2: false, membersBonded: [true, true], bondVlanCount: 0 };
  const l3Vlans = { ...l3, bondVlanCount: 1 };
  const l3PortOut = { ...l3, membersBonded: [true, false] };
  const l2 = { layer2: true, membersBonded: [true, true], bondVlanCount: 1 };
  const l2Individual = { ...l2, membersBonded: [false, false] };
  test.each([
    ['one bond: its own type', [l3Vlans], 'hybrid-bonded'],
    ['two layer-3 bonds', [l3, l3], 'layer3'],
    ['VLANs on either layer-3 bond', [l3, l3Vlans], 'hybrid-bonded'],
    ['a port out of bond1', [l3, l3PortOut], 'hybrid'],
    ['bond1 in layer 2 beside a layer-3 bond0', [l3, l2], 'hybrid'],
    ['bond0 in layer 2 beside a layer-3 bond1', [l2, l3], 'hybrid'],
    ['both in layer 2', [l2, l2], 'layer2-bonded'],
    ['both in layer 2, one broken up', [l2, l2Individual], 'layer2-individual'],
  ] as const)('%s is %s', (_name, bonds, want) => {
    expect(deviceNetworkType(bonds)).toBe(want);
  });
});
