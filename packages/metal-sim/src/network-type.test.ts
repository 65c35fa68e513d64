import { describe, expect, test } from '@jest/globals';
import { bondNetworkType, keepsLayer3 } from './network-type.js';

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
