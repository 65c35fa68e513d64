import { describe, expect, test } from '@jest/globals';
import type { Port, Vlan } from '@metal-l2/api';
import { desiredNetworkMode, desiredPorts, networkConfigOf, removesLayer3, resolvePorts } from './resolved-ports.js';
import { validateTemplate } from './webhook/template-validation.js';

const pool = { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'vrf-pool' };
const vlan = (vxlan: number, extra: Partial<Vlan> = {}): Vlan => ({ vxlan, addressesFromPools: [pool], ...extra });
const settled = (ports: readonly Port[]): Record<string, { bonded: boolean; layer2: boolean }> =>
  Object.fromEntries(resolvePorts(ports).ports.map((p) => [p.port.name, { bonded: p.bonded, layer2: p.layer2 }]));

describe('resolvePorts: 2-port servers (bond0 = eth0+eth1)', () => {
  test('hybrid: eth1 leaves bond0, eth0 follows it', () => {
    const ports: Port[] = [{ name: 'eth0' }, { name: 'eth1', bonded: false, vlans: [vlan(1000)] }];
    expect(resolvePorts(ports).portCount).toBe(2);
    expect(resolvePorts(ports).mode).toBe('hybrid');
    expect(settled(ports)).toEqual({ eth0: { bonded: true, layer2: false }, eth1: { bonded: false, layer2: false } });
  });

  test('layer2-individual: both eth ports follow the disbonded bond0', () => {
    const ports: Port[] = [
      { name: 'bond0', layer2: true, bonded: false },
      { name: 'eth0', vlans: [vlan(1000)] },
      { name: 'eth1', vlans: [vlan(1001)] },
    ];
    expect(resolvePorts(ports).mode).toBe('layer2-individual');
    expect(settled(ports)).toEqual({
      bond0: { bonded: false, layer2: true },
      eth0: { bonded: false, layer2: false },
      eth1: { bonded: false, layer2: false },
    });
  });

  test('the planner input keeps what the template said, VLANs by vxlan, the native one named', () => {
    const ports: Port[] = [
      { name: 'bond0', vlans: [vlan(1000)] },
      { name: 'eth1', bonded: false, vlans: [vlan(1001), vlan(1002, { native: true })] },
    ];
    expect(resolvePorts(ports).desired).toEqual([
      { name: 'bond0', vlans: [1000] },
      { name: 'eth1', bonded: false, vlans: [1001, 1002], nativeVlan: 1002 },
    ]);
  });
});

describe('resolvePorts: 4-port servers (bond0 = eth0+eth2, bond1 = eth1+eth3)', () => {
  // bond1 disbonded in layer 2, bond0 untouched: eth1 and eth3 carry VLANs on their own.
  const bond1Individual: Port[] = [
    { name: 'bond1', layer2: true, bonded: false },
    { name: 'eth1', vlans: [vlan(1000)] },
    { name: 'eth3', vlans: [vlan(1001)] },
  ];

  test('eth1 and eth3 follow bond1, not bond0', () => {
    expect(resolvePorts(bond1Individual).portCount).toBe(4);
    expect(settled(bond1Individual)).toEqual({
      bond1: { bonded: false, layer2: true },
      eth1: { bonded: false, layer2: false },
      eth3: { bonded: false, layer2: false },
    });
  });

  test('a layer-2 bond1 beside a layer-3 bond0 is hybrid', () => {
    expect(resolvePorts(bond1Individual).mode).toBe('hybrid');
  });

  test('eth2 follows bond0', () => {
    const ports: Port[] = [
      { name: 'bond0', layer2: true, bonded: false },
      { name: 'bond1', layer2: true, bonded: false },
      { name: 'eth2', vlans: [vlan(1000)] },
    ];
    expect(settled(ports)['eth2']).toEqual({ bonded: false, layer2: false });
    expect(resolvePorts(ports).mode).toBe('layer2-individual');
  });

  test('the same 2-port-looking template on a known 4-port server keeps bond1 in layer 3', () => {
    const ports: Port[] = [{ name: 'bond0', layer2: true, vlans: [vlan(1000), vlan(1001)] }];
    expect(resolvePorts(ports).mode).toBe('layer2-bonded');
    expect(resolvePorts(ports, 4).mode).toBe('hybrid');
    expect(desiredNetworkMode({ ports }, 4)).toBe('hybrid');
  });

  test('a layer-2 bond0 beside a layer-3 bond1 is hybrid, yet takes the metadata service away', () => {
    const ports: Port[] = [{ name: 'bond0', layer2: true, vlans: [vlan(1000), vlan(1001)] }, { name: 'bond1' }];
    expect(resolvePorts(ports)).toMatchObject({ portCount: 4, mode: 'hybrid', removesLayer3: true });
    expect(removesLayer3({ ports })).toBe(true);
    expect(removesLayer3({ ports: bond1Individual })).toBe(false);
    expect(removesLayer3({ ports: [{ name: 'bond0', layer2: true, bonded: false }] })).toBe(true);
  });

  test('the webhook, the reconciler and the renderer input agree', () => {
    const config = networkConfigOf({ ports: bond1Individual }, [], 'http://metadata');
    expect(config.ports.map((p) => [p.name, p.bonded])).toEqual([
      ['bond1', false],
      ['eth1', false],
      ['eth3', false],
    ]);
    const validation = validateTemplate({ ports: bond1Individual });
    expect(validation.issues).toEqual([]);
    expect(validation.networkType).toBe(desiredNetworkMode({ ports: bond1Individual }));
  });
});

// What the reconciler asks of a spec (was desired-ports.test.ts).
describe('desired ports', () => {
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
});
