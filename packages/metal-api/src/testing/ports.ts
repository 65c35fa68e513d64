// Test builders for the port planner: devices as the API reports them and desired ports, both
// sketched as "which port is bonded, layer 2, on which VLANs". Not part of the build.

import type { DesiredPort } from '../port-plan/desired.js';
import type { Device, Port, PortNetworkType, VirtualNetwork } from '../types.js';

export const METRO = 'da';

/** A project VLAN; ids are readable rather than UUIDs, which the planner does not care about. */
export function vlan(vxlan: number, metro = METRO): VirtualNetwork {
  return { id: `vlan-${metro}-${vxlan}`, vxlan, metro_code: metro, href: `/metal/v1/virtual-networks/vlan-${metro}-${vxlan}` };
}

/** The project's VLANs: 1000-1003 in the device's metro, 1000 and 2000 in another. */
export const PROJECT_VLANS: readonly VirtualNetwork[] = [
  vlan(1000),
  vlan(1001),
  vlan(1002),
  vlan(1003),
  vlan(1000, 'sv'),
  vlan(2000, 'sv'),
];

export interface PortSketch {
  bonded?: boolean;
  layer2?: boolean;
  vlans?: readonly number[];
  native?: number;
  disbondSupported?: boolean;
}

/** Ports by name; unnamed ports are bonded, layer 3 and without VLANs. */
export type DeviceSketch = Partial<Record<string, PortSketch>>;

// The five network types with the VLANs the tests use.
export const LAYER3: DeviceSketch = {};
export const HYBRID_BONDED: DeviceSketch = { bond0: { vlans: [1000] } };
export const HYBRID: DeviceSketch = { eth1: { bonded: false, vlans: [1001] } };
export const LAYER2_BONDED: DeviceSketch = { bond0: { layer2: true, vlans: [1000, 1001] } };
export const LAYER2_INDIVIDUAL: DeviceSketch = {
  bond0: { layer2: true, bonded: false },
  eth0: { bonded: false, vlans: [1000] },
  eth1: { bonded: false, vlans: [1001] },
};

export interface DeviceOptions {
  /** 2 (bond0 = eth0+eth1, the default) or 4 (bond0 = eth0+eth2, bond1 = eth1+eth3). */
  portCount?: 2 | 4;
  networkFrozen?: boolean;
  metro?: string;
  /** Report VLANs as bare `{href}` links, as the API does when they are not included. */
  vlansAsLinks?: boolean;
}

const BONDS_OF: Record<2 | 4, Record<string, string>> = {
  2: { eth0: 'bond0', eth1: 'bond0' },
  4: { eth0: 'bond0', eth1: 'bond1', eth2: 'bond0', eth3: 'bond1' },
};

/** A device as `GET /devices/{id}` reports it, in the state the sketch describes. */
export function apiDevice(sketch: DeviceSketch, options: DeviceOptions = {}): Device {
  const bondOf = BONDS_OF[options.portCount ?? 2];
  const bondNames = [...new Set(Object.values(bondOf))];
  const ref = (vxlan: number): VirtualNetwork => {
    const vn = vlan(vxlan, options.metro ?? METRO);
    return options.vlansAsLinks === true ? { href: vn.href ?? '' } : vn;
  };
  const portOf = (name: string, isBond: boolean): Port => {
    const s = sketch[name] ?? {};
    const bonded = s.bonded ?? (isBond ? true : (sketch[bondOf[name] ?? '']?.bonded ?? true));
    return {
      id: `port-${name}`,
      name,
      type: isBond ? 'NetworkBondPort' : 'NetworkPort',
      data: { bonded, mac: `00:00:00:00:00:0${name.slice(-1)}` },
      ...(isBond ? {} : { bond: { id: `port-${bondOf[name] ?? ''}`, name: bondOf[name] ?? '' } }),
      ...(s.disbondSupported === undefined ? {} : { disbond_operation_supported: s.disbondSupported }),
      virtual_networks: (s.vlans ?? []).map(ref),
      ...(s.native === undefined ? {} : { native_virtual_network: ref(s.native) }),
    };
  };
  const bonds = bondNames.map((name) => portOf(name, true));
  const physical = Object.keys(bondOf).map((name) => portOf(name, false));
  for (const bond of bonds) {
    const members = physical.filter((p) => p.bond?.name === bond.name);
    bond.network_type = networkTypeOf(sketch[bond.name ?? ''] ?? {}, members);
  }
  return {
    id: 'device-1',
    hostname: 'machine-1',
    state: 'active',
    metro: { code: options.metro ?? METRO },
    network_frozen: options.networkFrozen ?? false,
    // Physical ports first, as a reminder that the planner sorts them itself.
    network_ports: [...physical, ...bonds],
  };
}

function networkTypeOf(bond: PortSketch, members: readonly Port[]): PortNetworkType {
  const allBonded = members.every((m) => m.data?.bonded === true);
  if (bond.layer2 === true) return allBonded && bond.bonded !== false ? 'layer2-bonded' : 'layer2-individual';
  if (!allBonded) return 'hybrid';
  return (bond.vlans ?? []).length > 0 ? 'hybrid-bonded' : 'layer3';
}

/** The desired ports the sketch describes (only the ports it names). */
export function desiredPorts(sketch: DeviceSketch): DesiredPort[] {
  return Object.entries(sketch).map(([name, s]) => ({
    name,
    ...(s?.bonded === undefined ? {} : { bonded: s.bonded }),
    ...(s?.layer2 === undefined ? {} : { layer2: s.layer2 }),
    ...(s?.vlans === undefined ? {} : { vlans: s.vlans }),
    ...(s?.native === undefined ? {} : { nativeVlan: s.native }),
  }));
}
