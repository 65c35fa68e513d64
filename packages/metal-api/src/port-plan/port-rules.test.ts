import { describe, expect, test } from '@jest/globals';
import { apiDevice, LAYER3, PROJECT_VLANS } from '../testing/ports.js';
import type { DesiredPort } from './desired.js';
import { planPortChanges } from './plan.js';
import { checkPortRules, portCelRules, type PortUnderRules } from './port-rules.js';

const bond0 = (settings: Partial<PortUnderRules> = {}): PortUnderRules => ({
  name: 'bond0',
  isBond: true,
  bonded: true,
  layer2: false,
  vlanCount: 0,
  hasNativeVlan: false,
  asked: undefined,
  bond: undefined,
  firstOfBond: false,
  members: ['eth0', 'eth1'],
  ...settings,
});

describe('port rules', () => {
  test('the CRD checks what one port can say in the words the planner and the webhook use', () => {
    const unbonded = checkPortRules(bond0({ bonded: false, asked: {} }), 'device');
    expect(unbonded.map((i) => i.code)).toEqual(['Layer3PortUnbonded']);
    const cel = portCelRules('port').map((r) => r.message);
    expect(cel).toContain(unbonded[0]?.message.replace(/^bond0: /, ''));
    expect(portCelRules('vlans').map((r) => r.message)).toEqual([
      'a native VLAN needs at least one other (tagged) VLAN on the same port, as Equinix Metal requires; list a tagged VLAN beside it or drop native',
    ]);
  });

  test('a port leaving a bond that stays bonded in layer 2: refused for new templates, carried out for existing machines', () => {
    const desired: DesiredPort[] = [
      { name: 'bond0', layer2: true, vlans: [1000] },
      { name: 'eth1', bonded: false, vlans: [1001] },
    ];
    const input = { device: apiDevice(LAYER3), desired, virtualNetworks: PROJECT_VLANS };
    const template = planPortChanges({ ...input, rules: 'template' });
    expect(template.kind === 'refused' ? template.issues.map(({ code, path }) => ({ code, path })) : template).toEqual([
      { code: 'PortLeavesLayer2Bond', path: 'desired[1].bonded' },
    ]);
    expect(planPortChanges(input).kind).toBe('planned');
  });

  test('the first port of a layer-3 bond names its bond, whichever plan it is', () => {
    const eth1 = checkPortRules(
      {
        ...bond0(),
        name: 'eth1',
        isBond: false,
        bonded: false,
        members: [],
        asked: {},
        bond: { name: 'bond1', bonded: true, layer2: false },
        firstOfBond: true,
      },
      'device',
    );
    expect(eth1).toEqual([
      {
        code: 'Layer3PortUnbonded',
        field: 'bonded',
        message:
          'eth1 is the first port of bond1, which stays in layer 3: eth1 leaves its bond only with the whole bond (set bonded: false and layer2: true on bond1 for layer2-individual)',
      },
    ]);
  });
});
