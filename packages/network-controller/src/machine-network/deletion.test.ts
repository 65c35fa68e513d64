import { describe, expect, test } from '@jest/globals';
import type { ObservedPort } from '@metal-l2/metal-api';
import { portsWithoutOurVlans } from './deletion.js';

const port = (over: Partial<ObservedPort> & Pick<ObservedPort, 'id' | 'name'>): ObservedPort => ({
  isBond: false,
  bondName: undefined,
  disbondSupported: undefined,
  bonded: true,
  layer2: false,
  vlans: [],
  nativeVlan: undefined,
  ...over,
});

describe('portsWithoutOurVlans', () => {
  test('drops only the VLANs this controller assigned on that port, tagged and native, and keeps the rest', () => {
    const observed = [
      port({
        id: 'p-bond0',
        name: 'bond0',
        isBond: true,
        layer2: true,
        vlans: [
          { id: 'v-ours', vxlan: 1000 },
          { id: 'v-theirs', vxlan: 1001 },
        ],
        nativeVlan: { id: 'v-native', vxlan: 1002 },
      }),
      // The same VLAN on another port was not assigned by us there: it stays.
      port({ id: 'p-eth1', name: 'eth1', bondName: 'bond0', bonded: false, vlans: [{ id: 'v-ours', vxlan: 1000 }] }),
    ];
    const ours = [
      { portID: 'p-bond0', vlanID: 'v-ours' },
      { portID: 'p-bond0', vlanID: 'v-native' },
    ];
    expect(portsWithoutOurVlans(observed, ours)).toEqual([
      { name: 'bond0', bonded: true, layer2: true, vlans: [1001] },
      { name: 'eth1', bonded: false, vlans: [1000] },
    ]);
  });

  test('keeps a native VLAN that is not ours, and leaves layer 2 unsaid on physical ports', () => {
    const observed = [port({ id: 'p-eth0', name: 'eth0', nativeVlan: { id: 'v-x', vxlan: 7 }, vlans: [{ id: 'v-y', vxlan: undefined }] })];
    expect(portsWithoutOurVlans(observed, [])).toEqual([{ name: 'eth0', bonded: true, vlans: [], nativeVlan: 7 }]);
  });
});
