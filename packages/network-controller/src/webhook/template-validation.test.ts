import { describe, expect, test } from '@jest/globals';
import type { MachineNetworkTemplateSpec, Port, Vlan } from '@metal-l2/api';
import { validateTemplate } from './template-validation.js';

const pool = { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'vrf-pool' };
const vlan = (vxlan: number, extra: Partial<Vlan> = {}): Vlan => ({ vxlan, addressesFromPools: [pool], ...extra });
const spec = (...ports: Port[]): Pick<MachineNetworkTemplateSpec, 'ports'> => ({ ports });

interface ValidCase {
  name: string;
  spec: Pick<MachineNetworkTemplateSpec, 'ports'>;
  networkType: string;
  warnings?: number;
}

interface InvalidCase {
  name: string;
  spec: Pick<MachineNetworkTemplateSpec, 'ports'>;
  want: { code: string; path: string; message: string }[];
}

describe('validateTemplate: templates that pass', () => {
  test.each<ValidCase>([
    { name: 'hybrid-bonded: VLANs on bond0 in layer 3', spec: spec({ name: 'bond0', vlans: [vlan(1000)] }), networkType: 'hybrid-bonded' },
    {
      name: 'hybrid: eth1 leaves the bond and carries VLANs',
      spec: spec({ name: 'eth1', bonded: false, vlans: [vlan(1000), vlan(1001, { native: true })] }),
      networkType: 'hybrid',
    },
    {
      name: 'layer2-bonded: bond0 in layer 2 with VLANs',
      spec: spec({ name: 'bond0', layer2: true, vlans: [vlan(1000), vlan(1001)] }),
      networkType: 'layer2-bonded',
    },
    {
      name: 'layer2-individual: the eth ports carry the VLANs',
      spec: spec(
        { name: 'bond0', layer2: true, bonded: false },
        { name: 'eth0', vlans: [vlan(1000)] },
        { name: 'eth1', vlans: [vlan(1001)] },
      ),
      networkType: 'layer2-individual',
    },
    { name: 'layer3: nothing but bond0', spec: spec({ name: 'bond0' }), networkType: 'layer3' },
    {
      name: 'one default route per family',
      spec: spec(
        { name: 'bond0', vlans: [vlan(1000, { routes: [{ to: 'default', via: '10.0.0.1' }] })] },
        {
          name: 'eth1',
          bonded: false,
          vlans: [
            vlan(1001, {
              routes: [
                { to: 'default', via: 'fd00::1' },
                { to: '10.60.0.0/16', via: '10.1.0.1' },
              ],
            }),
          ],
        },
      ),
      networkType: 'hybrid',
    },
    {
      name: 'a pool of any IPAM provider',
      spec: spec({
        name: 'bond0',
        vlans: [vlan(1000, { addressesFromPools: [{ apiGroup: 'ipam.cluster.x-k8s.io', kind: 'SomeoneElsesPool', name: 'p' }] })],
      }),
      networkType: 'hybrid-bonded',
    },
    {
      name: 'a 4-port template passes with a warning per 4-port name',
      spec: spec({ name: 'bond1', layer2: true, vlans: [vlan(1000)] }, { name: 'eth3' }),
      networkType: 'hybrid',
      warnings: 2,
    },
  ])('$name', ({ spec: s, networkType, warnings }) => {
    const got = validateTemplate(s);
    expect(got.issues).toEqual([]);
    expect(got.networkType).toBe(networkType);
    expect(got.warnings).toHaveLength(warnings ?? 0);
  });

  test('the warning names the port and the 4-port plan', () => {
    expect(validateTemplate(spec({ name: 'eth2' })).warnings).toEqual([
      'port eth2 exists on 4-port servers only (bond0 = eth0+eth2, bond1 = eth1+eth3); 2-port machines cannot use this template',
    ]);
  });
});

describe('validateTemplate: templates that are refused', () => {
  test.each<InvalidCase>([
    {
      name: 'two IPv4 default routes on different ports',
      spec: spec(
        { name: 'bond0', vlans: [vlan(1000, { routes: [{ to: 'default', via: '10.0.0.1' }] })] },
        { name: 'eth1', bonded: false, vlans: [vlan(1001, { routes: [{ to: '0.0.0.0/0', via: '10.1.0.1' }] })] },
      ),
      want: [
        {
          code: 'MultipleDefaultRoutes',
          path: 'spec.ports[1].vlans[0].routes[0].to',
          message:
            'a second IPv4 default route (via 10.1.0.1 on eth1 VLAN 1001); the template has one on bond0 VLAN 1000 already: a machine takes one default route per address family',
        },
      ],
    },
    {
      name: 'two IPv6 default routes on one VLAN',
      spec: spec({
        name: 'bond0',
        vlans: [
          vlan(1000, {
            routes: [
              { to: 'default', via: 'fd00::1' },
              { to: '::/0', via: 'fd00::2' },
            ],
          }),
        ],
      }),
      want: [
        {
          code: 'MultipleDefaultRoutes',
          path: 'spec.ports[0].vlans[0].routes[1].to',
          message:
            'a second IPv6 default route (via fd00::2 on bond0 VLAN 1000); the template has one on bond0 VLAN 1000 already: a machine takes one default route per address family',
        },
      ],
    },
    {
      name: 'VLANs on eth1 while it stays in bond0',
      spec: spec({ name: 'eth1', vlans: [vlan(1000)] }),
      want: [
        {
          code: 'PortPlan',
          path: 'spec.ports[0].vlans',
          message:
            'eth1 stays in bond0, so it carries no VLANs of its own: list them on bond0, or take eth1 out of the bond (bonded: false on eth1 for hybrid, or layer2: true and bonded: false on bond0 for layer2-individual) (VlanOnBondedMember)',
        },
      ],
    },
    {
      name: 'VLANs on bond0 in layer2-individual',
      spec: spec({ name: 'bond0', layer2: true, bonded: false, vlans: [vlan(1000)] }),
      want: [
        {
          code: 'PortPlan',
          path: 'spec.ports[0].vlans',
          message:
            'bond0 is disbonded (layer2-individual: layer2 with bonded: false), so it carries no VLANs: list them on eth0 and eth1 instead (VlanOnUnbondedBond)',
        },
      ],
    },
    {
      name: 'eth1 unbonded while bond0 stays bonded in layer 2',
      spec: spec({ name: 'bond0', layer2: true, vlans: [vlan(1000)] }, { name: 'eth1', bonded: false, vlans: [vlan(1001)] }),
      want: [
        {
          code: 'PortPlan',
          path: 'spec.ports[1].bonded',
          message:
            'eth1 leaves bond0 while bond0 stays bonded in layer 2: a port leaves its bond only in hybrid mode, which keeps bond0 in layer 3 (drop layer2 on bond0), or with the whole bond in layer2-individual (bonded: false on bond0) (PortLeavesLayer2Bond)',
        },
      ],
    },
    {
      name: 'an empty pool apiGroup',
      spec: spec({ name: 'bond0', vlans: [vlan(1000, { addressesFromPools: [{ apiGroup: ' ', kind: 'InClusterIPPool', name: 'p' }] })] }),
      want: [
        {
          code: 'EmptyPoolApiGroup',
          path: 'spec.ports[0].vlans[0].addressesFromPools[0].apiGroup',
          message: 'pool InClusterIPPool/p needs the API group of its IPAM provider (e.g. ipam.metal.x-k8s.io or ipam.cluster.x-k8s.io)',
        },
      ],
    },
    {
      name: 'a port no server has',
      spec: spec({ name: 'bond0' }, { name: 'eth7' }),
      want: [
        {
          code: 'UnknownPort',
          path: 'spec.ports[1].name',
          message: 'no Metal server has a port eth7: 2-port plans have bond0, eth0, eth1; 4-port plans also bond1, eth2, eth3',
        },
      ],
    },
    {
      name: 'the planner: a native VLAN needs a second VLAN on the port',
      spec: spec({ name: 'eth1', bonded: false, vlans: [vlan(1000, { native: true })] }),
      want: [
        {
          code: 'PortPlan',
          path: 'spec.ports[0].vlans[0].native',
          message:
            'eth1: a native VLAN needs at least one other (tagged) VLAN on the same port, as Equinix Metal requires; list a tagged VLAN beside it or drop native (NativeVlanNeedsTwoVlans)',
        },
      ],
    },
    {
      name: 'the planner: eth1 bonded to a disbonded bond',
      spec: spec({ name: 'bond0', layer2: true, bonded: false }, { name: 'eth1', bonded: true }),
      want: [
        {
          code: 'PortPlan',
          path: 'spec.ports[1].bonded',
          message: 'eth1 cannot be bonded: it belongs to bond0, which is disbonded (BondedPortWithoutBond)',
        },
      ],
    },
  ])('$name', ({ spec: s, want }) => {
    const got = validateTemplate(s);
    expect(got.issues).toEqual(want);
    expect(got.networkType).toBeUndefined();
  });
});
