// The ports a Metal server has, by plan family, and the settings each ends up with once the
// defaults are applied to a partial description. The one place that knows which eth port belongs
// to which bond and how an unlisted port behaves: the planner (against a real device), the
// network controller's admission check and its renderers all ask here.

import type { PortNetworkType } from '../types.js';
import type { DesiredPort } from './desired.js';

// ---- Why a port plan was refused ----
//
// Why a port plan was refused. Issues are values with a stable code (users and alerts key on it),
// a path into the planner's input and a readable message, so a webhook, a condition and a log line
// can all say the same thing.

export const PORT_PLAN_ISSUE_CODES = {
  /** The device reports no ports, or a port without id or name; or its metro is unknown. */
  incompleteDevice: 'IncompleteDevice',
  /** `network_frozen` is set on the device and the plan would change its ports. */
  networkFrozen: 'NetworkFrozen',
  /** A desired port the device does not have. */
  unknownPort: 'UnknownPort',
  /** The same port named twice. */
  duplicatePort: 'DuplicatePort',
  /** `layer2` on a physical port: only bond ports change layer. */
  layer2OnNonBondPort: 'Layer2OnNonBondPort',
  /** A layer-3 bond port that would be unbonded, or the first port of a layer-3 bond leaving it. */
  layer3PortUnbonded: 'Layer3PortUnbonded',
  /** A physical port bonded to a bond that is itself disbonded, or to no bond at all. */
  bondedPortWithoutBond: 'BondedPortWithoutBond',
  /** VLANs on a physical port that stays in its bond: they belong on the bond port. */
  vlanOnBondedMember: 'VlanOnBondedMember',
  /** VLANs on a disbonded bond port: they belong on its physical ports. */
  vlanOnUnbondedBond: 'VlanOnUnbondedBond',
  /** New templates: a physical port leaving a bond that stays bonded in layer 2 (hybrid needs the bond in layer 3). */
  portLeavesLayer2Bond: 'PortLeavesLayer2Bond',
  /** The native VLAN is not one of the port's VLANs. */
  nativeVlanNotAssigned: 'NativeVlanNotAssigned',
  /** A native VLAN needs at least two VLANs on the port (as the Terraform provider checks). */
  nativeVlanNeedsTwoVlans: 'NativeVlanNeedsTwoVlans',
  /** A native VLAN on a layer-3 bond port: its untagged traffic is the layer-3 network. */
  nativeVlanOnLayer3Port: 'NativeVlanOnLayer3Port',
  /** The same VLAN twice on one port. */
  duplicateVlan: 'DuplicateVlan',
  /** No VLAN with this vxlan in the project. */
  vlanNotFound: 'VlanNotFound',
  /** The project has this vxlan only in other metros; VLANs are metro-local. */
  vlanInOtherMetro: 'VlanInOtherMetro',
  /** The port says it cannot leave its bond (`disbond_operation_supported: false`). */
  disbondNotSupported: 'DisbondNotSupported',
} as const;

export type PortPlanIssueCode = (typeof PORT_PLAN_ISSUE_CODES)[keyof typeof PORT_PLAN_ISSUE_CODES];

export interface PortPlanIssue {
  code: PortPlanIssueCode;
  /** Where in the input: `desired[1].vlans[0]`, `device.network_frozen`, `device.network_ports[2]`. */
  path: string;
  message: string;
}

// The composite network type of a machine, derived from its ports, the way the Metal console and
// packngo's Device.GetNetworkType name it. Used for observed ports and for desired ports alike,
// so the type is never written down twice.

/** One of the five network types of an Equinix Metal server (PORT_NETWORK_TYPES, the API's enum). */
export type NetworkType = PortNetworkType;

/** What the derivation needs to know about a port. */
export interface PortShape {
  /** A bond port (`NetworkBondPort`, bond0) rather than a physical one. */
  isBond: boolean;
  bonded: boolean;
  /** Meaningful on bond ports only. */
  layer2: boolean;
  vlanCount: number;
}

/**
 * - every bond port in layer 2: layer2-bonded when every port is bonded, else layer2-individual;
 * - every bond port in layer 3: hybrid when a port left its bond, else hybrid-bonded when a bond
 *   port carries VLANs, else layer3;
 * - layer 2 and layer 3 bonds side by side (4-port plans): hybrid.
 * Undefined without any bond port: there is nothing to name.
 */
export function deriveNetworkType(ports: readonly PortShape[]): NetworkType | undefined {
  const bonds = ports.filter((p) => p.isBond);
  if (bonds.length === 0) return undefined;
  const allBonded = ports.every((p) => p.bonded);
  if (bonds.every((b) => b.layer2)) return allBonded ? 'layer2-bonded' : 'layer2-individual';
  if (bonds.some((b) => b.layer2)) return 'hybrid';
  if (!allBonded) return 'hybrid';
  return bonds.some((b) => b.vlanCount > 0) ? 'hybrid-bonded' : 'layer3';
}

/** Metal server plans come with 2 or 4 physical ports. */
export type PortCount = 2 | 4;

/** Which bond each physical port belongs to: 2-port bond0 = eth0+eth1; 4-port bond0 = eth0+eth2, bond1 = eth1+eth3. */
export const PORT_LAYOUTS: Readonly<Record<PortCount, Readonly<Record<string, string>>>> = {
  2: { eth0: 'bond0', eth1: 'bond0' },
  4: { eth0: 'bond0', eth1: 'bond1', eth2: 'bond0', eth3: 'bond1' },
};

/** Port names only 4-port plans have. */
export const FOUR_PORT_ONLY: readonly string[] = ['bond1', 'eth2', 'eth3'];

/** Bond ports are named bond0, bond1, ... by the Metal API. */
export function isBondName(name: string): boolean {
  return /^bond[0-9]+$/.test(name);
}

/** Every port name of a plan family, bonds first: bond0, (bond1,) eth0, eth1, ... */
export function portNamesOf(portCount: PortCount): string[] {
  const layout = PORT_LAYOUTS[portCount];
  return [...new Set(Object.values(layout))].sort().concat(Object.keys(layout).sort());
}

/** The plan family a description is written for: 4-port as soon as it names a 4-port-only port. */
export function portCountOf(names: Iterable<string>): PortCount {
  for (const name of names) if (FOUR_PORT_ONLY.includes(name)) return 4;
  return 2;
}

/**
 * The defaults, in one rule: a bond port is bonded in layer 3 unless told otherwise; a physical
 * port follows its bond (and is unbonded without one).
 */
export function settleDefaults(
  isBond: boolean,
  spec: Pick<DesiredPort, 'bonded' | 'layer2'> | undefined,
  bond: { readonly bonded: boolean } | undefined,
): { bonded: boolean; layer2: boolean } {
  if (isBond) return { bonded: spec?.bonded ?? true, layer2: spec?.layer2 ?? false };
  return { bonded: spec?.bonded ?? bond?.bonded ?? false, layer2: false };
}

/** One port of the plan family with the defaults applied. */
export interface EffectivePort extends PortShape {
  readonly name: string;
  /** Physical ports: the bond they belong to. */
  readonly bond: string | undefined;
}

/**
 * Every port of the plan family as `desired` leaves it, in portNamesOf order. Desired ports the
 * family has no port for are left out (the planner names them against the real device).
 */
export function effectivePorts(desired: readonly DesiredPort[], portCount: PortCount): EffectivePort[] {
  const layout = PORT_LAYOUTS[portCount];
  const byName = new Map(desired.map((p) => [p.name, p]));
  const settled = new Map<string, { bonded: boolean; layer2: boolean }>();
  return portNamesOf(portCount).map((name) => {
    const isBond = isBondName(name);
    const spec = byName.get(name);
    const bond = isBond ? undefined : layout[name];
    const settings = settleDefaults(isBond, spec, bond === undefined ? undefined : settled.get(bond));
    if (isBond) settled.set(name, settings);
    return { name, isBond, bond, ...settings, vlanCount: spec?.vlans?.length ?? 0 };
  });
}

/** The network type `desired` amounts to on a server of the plan family. */
export function desiredNetworkType(desired: readonly DesiredPort[], portCount: PortCount): NetworkType | undefined {
  return deriveNetworkType(effectivePorts(desired, portCount));
}
