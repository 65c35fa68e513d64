import { describe, expect, test } from '@jest/globals';
import { apiDevice, HYBRID, LAYER3, PROJECT_VLANS, vlan } from '../testing/ports.js';
import type { DeviceOptions, DeviceSketch } from '../testing/ports.js';
import type { DesiredPort } from './desired.js';
import type { PortPlanIssue } from './port-layout.js';
import { planPortChanges } from './plan.js';

function refusal(from: DeviceSketch, desired: DesiredPort[], options: DeviceOptions = {}): Pick<PortPlanIssue, 'code' | 'path'>[] {
  const result = planPortChanges({ device: apiDevice(from, options), desired, virtualNetworks: PROJECT_VLANS });
  if (result.kind !== 'refused') throw new Error(`expected a refusal, got ${result.calls.length} call(s)`);
  return result.issues.map(({ code, path }) => ({ code, path }));
}

const refusals: {
  name: string;
  from?: DeviceSketch;
  desired: DesiredPort[];
  options?: DeviceOptions;
  issues: Pick<PortPlanIssue, 'code' | 'path'>[];
}[] = [
  {
    name: 'layer2 on a physical port',
    desired: [{ name: 'eth1', bonded: false, layer2: true, vlans: [1000] }],
    issues: [{ code: 'Layer2OnNonBondPort', path: 'desired[0].layer2' }],
  },
  {
    name: 'a layer-3 bond port that is unbonded',
    desired: [{ name: 'bond0', bonded: false }],
    issues: [{ code: 'Layer3PortUnbonded', path: 'desired[0].bonded' }],
  },
  {
    name: 'the first port of a layer-3 bond leaving it',
    desired: [{ name: 'eth0', bonded: false, vlans: [1000] }],
    issues: [{ code: 'Layer3PortUnbonded', path: 'desired[0].bonded' }],
  },
  {
    name: 'a native VLAN that is not among the assigned ones',
    desired: [{ name: 'bond0', layer2: true, vlans: [1000, 1001], nativeVlan: 1002 }],
    issues: [{ code: 'NativeVlanNotAssigned', path: 'desired[0].nativeVlan' }],
  },
  {
    name: 'a native VLAN with a single VLAN on the port',
    desired: [{ name: 'bond0', layer2: true, vlans: [1000], nativeVlan: 1000 }],
    issues: [{ code: 'NativeVlanNeedsTwoVlans', path: 'desired[0].nativeVlan' }],
  },
  {
    name: 'a native VLAN on a bond that stays in layer 3 (hybrid bonded)',
    desired: [{ name: 'bond0', vlans: [1000, 1001], nativeVlan: 1000 }],
    issues: [{ code: 'NativeVlanOnLayer3Port', path: 'desired[0].nativeVlan' }],
  },
  {
    name: 'a network_frozen device that would need changes',
    desired: [{ name: 'bond0', vlans: [1000] }],
    options: { networkFrozen: true },
    issues: [{ code: 'NetworkFrozen', path: 'device.network_frozen' }],
  },
  {
    name: 'a VLAN that exists only in another metro',
    desired: [{ name: 'bond0', vlans: [2000] }],
    issues: [{ code: 'VlanInOtherMetro', path: 'desired[0].vlans[0]' }],
  },
  {
    name: 'a VLAN the project does not have',
    desired: [{ name: 'bond0', vlans: [1000, 3999] }],
    issues: [{ code: 'VlanNotFound', path: 'desired[0].vlans[1]' }],
  },
  {
    name: 'the same VLAN twice on a port',
    desired: [{ name: 'bond0', vlans: [1000, 1000] }],
    issues: [{ code: 'DuplicateVlan', path: 'desired[0].vlans[1]' }],
  },
  {
    name: 'a port the device does not have',
    desired: [{ name: 'eth3', bonded: false }],
    issues: [{ code: 'UnknownPort', path: 'desired[0].name' }],
  },
  {
    name: 'the same port twice',
    desired: [{ name: 'bond0' }, { name: 'bond0', vlans: [1000] }],
    issues: [{ code: 'DuplicatePort', path: 'desired[1].name' }],
  },
  {
    name: 'VLANs on a physical port that stays bonded',
    desired: [{ name: 'eth1', vlans: [1000] }],
    issues: [{ code: 'VlanOnBondedMember', path: 'desired[0].vlans' }],
  },
  {
    name: 'VLANs on a disbonded bond port',
    desired: [{ name: 'bond0', layer2: true, bonded: false, vlans: [1000] }],
    issues: [{ code: 'VlanOnUnbondedBond', path: 'desired[0].vlans' }],
  },
  {
    name: 'a physical port bonded to a disbonded bond',
    desired: [
      { name: 'bond0', layer2: true, bonded: false },
      { name: 'eth0', bonded: true },
    ],
    issues: [{ code: 'BondedPortWithoutBond', path: 'desired[1].bonded' }],
  },
  {
    name: 'a port that cannot leave its bond',
    from: { eth1: { disbondSupported: false } },
    desired: [{ name: 'eth1', bonded: false, vlans: [1001] }],
    issues: [{ code: 'DisbondNotSupported', path: 'desired[0].bonded' }],
  },
  {
    name: 'every problem at once, each with its own path',
    desired: [
      { name: 'bond0', bonded: false, vlans: [2000] },
      { name: 'eth1', layer2: true },
    ],
    issues: [
      { code: 'VlanInOtherMetro', path: 'desired[0].vlans[0]' },
      { code: 'Layer3PortUnbonded', path: 'desired[0].bonded' },
      { code: 'Layer2OnNonBondPort', path: 'desired[1].layer2' },
    ],
  },
];

describe('planPortChanges refuses invalid targets with a reason', () => {
  test.each(refusals)('$name', ({ from, desired, options, issues }) => {
    expect(refusal(from ?? LAYER3, desired, options)).toEqual(issues);
  });

  test('messages name the port and the VLAN', () => {
    const result = planPortChanges({
      device: apiDevice(LAYER3),
      desired: [{ name: 'bond0', vlans: [2000] }],
      virtualNetworks: PROJECT_VLANS,
    });
    expect(result).toEqual({
      kind: 'refused',
      issues: [{ code: 'VlanInOtherMetro', path: 'desired[0].vlans[0]', message: "VLAN 2000 exists in sv, not in the device's metro da" }],
    });
  });

  test('a device without ports cannot be planned', () => {
    const result = planPortChanges({ device: { network_ports: [] }, desired: [], virtualNetworks: [] });
    expect(result).toMatchObject({ kind: 'refused', issues: [{ code: 'IncompleteDevice', path: 'device.network_ports' }] });
  });

  test('VLANs cannot be resolved without the device metro', () => {
    const device = { ...apiDevice(LAYER3) };
    delete device.metro;
    const result = planPortChanges({ device, desired: [{ name: 'bond0', vlans: [1000] }], virtualNetworks: [vlan(1000)] });
    expect(result).toMatchObject({ kind: 'refused', issues: [{ code: 'IncompleteDevice', path: 'device.metro' }] });
  });

  test('a layer-3 bond that says it cannot disbond may still go layer2-individual: it converts first', () => {
    const from = { bond0: { disbondSupported: false }, eth0: { disbondSupported: false } };
    const result = planPortChanges({
      device: apiDevice(from),
      desired: [{ name: 'bond0', layer2: true, bonded: false }],
      virtualNetworks: PROJECT_VLANS,
    });
    expect(result.kind).toBe('planned');
  });

  test('leaving hybrid on a port that cannot disbond is fine: it only rejoins', () => {
    const result = planPortChanges({
      device: apiDevice({ ...HYBRID, eth1: { bonded: false, disbondSupported: false } }),
      desired: [],
      virtualNetworks: PROJECT_VLANS,
    });
    expect(result.kind).toBe('planned');
  });
});
