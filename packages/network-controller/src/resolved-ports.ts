// A template's ports, resolved once: what the Metal planner is asked for (DesiredPort[]), the
// network type they amount to, and the settings each listed port ends up with (what the OS
// renderers are told). The admission webhook, the reconciler and the renderer input all come
// from here, so a port's defaults (a physical port follows ITS bond, which on 4-port plans may be
// bond1) are applied one way. The Metal facts themselves (layouts, defaults, the type) live in
// metal-api's port layout, and what a port's settings may be in its port rules; this module only
// maps the API's Port onto them, which metal-api cannot do (it does not know the CRD types:
// dependencies point from the controllers down).

import type { AddressRecord, MachineNetworkSpec, NetworkMode, Port } from '@metal-l2/api';
import type { MachineNetworkConfig, PortConfig } from '@metal-l2/machine-config';
import { effectivePorts, isBondName, portCountOf, deriveNetworkType, type DesiredPort, type PortCount } from '@metal-l2/metal-api';

/** A listed port with its defaults applied. */
export interface ResolvedPort {
  readonly port: Port;
  readonly isBond: boolean;
  /** Bond ports: the bond is up. Physical ports: the port stays in its bond. */
  readonly bonded: boolean;
  readonly layer2: boolean;
}

export interface ResolvedPorts {
  /** The plan family the ports were resolved for. */
  readonly portCount: PortCount;
  /** Index-aligned with the listed ports. */
  readonly desired: readonly DesiredPort[];
  /** Index-aligned with the listed ports. */
  readonly ports: readonly ResolvedPort[];
  readonly mode: NetworkMode | undefined;
  /**
   * bond0 ends in layer 2, so the device loses its management addresses and the metadata service:
   * in layer2-* modes, and in a 4-port hybrid whose bond0 (not bond1) goes to layer 2.
   */
  readonly removesLayer3: boolean;
}

/**
 * `portCount` is the server's when it is known (the device's ports); otherwise the family the
 * ports name (4-port as soon as bond1, eth2 or eth3 is listed).
 */
export function resolvePorts(ports: readonly Port[], portCount: PortCount = portCountOf(ports.map((p) => p.name))): ResolvedPorts {
  const desired = ports.map(desiredPortOf);
  const effective = effectivePorts(desired, portCount);
  const byName = new Map(effective.map((e) => [e.name, e]));
  const resolved = ports.map((port): ResolvedPort => {
    const isBond = isBondName(port.name);
    // A name the plan family lacks keeps what it says; the planner refuses it against the device.
    const e = byName.get(port.name);
    return { port, isBond, bonded: e?.bonded ?? port.bonded ?? isBond, layer2: e?.layer2 ?? (isBond && port.layer2 === true) };
  });
  const removesLayer3 = byName.get('bond0')?.layer2 === true;
  return { portCount, desired, ports: resolved, mode: deriveNetworkType(effective), removesLayer3 };
}

/** A template port as the Metal planner takes it: VLANs by vxlan, the native one named. */
function desiredPortOf(port: Port): DesiredPort {
  const vlans = (port.vlans ?? []).map((v) => v.vxlan);
  const native = (port.vlans ?? []).find((v) => v.native === true)?.vxlan;
  return {
    name: port.name,
    ...(port.bonded === undefined ? {} : { bonded: port.bonded }),
    ...(port.layer2 === undefined ? {} : { layer2: port.layer2 }),
    vlans,
    ...(native === undefined ? {} : { nativeVlan: native }),
  };
}

// ---- What the reconciler asks of a spec: the planner's ports, the mode, the OS renderers' input ----

/** The spec's ports as the Metal planner takes them (see resolvePorts). */
export function desiredPorts(spec: Pick<MachineNetworkSpec, 'ports'>): DesiredPort[] {
  return [...resolvePorts(spec.ports).desired];
}

/**
 * The network type the spec asks for, named the way the Metal API names it, on a server of
 * `portCount` ports when known, else of the family the spec's port names imply.
 */
export function desiredNetworkMode(spec: Pick<MachineNetworkSpec, 'ports'>, portCount?: PortCount): NetworkMode | undefined {
  return resolvePorts(spec.ports, portCount).mode;
}

/**
 * Whether the spec takes bond0 to layer 2, so the metadata service goes away with it: the layer2-*
 * modes, and a 4-port hybrid with bond0 (not bond1) in layer 2, which the mode alone does not tell.
 */
export function removesLayer3(spec: Pick<MachineNetworkSpec, 'ports'>): boolean {
  return resolvePorts(spec.ports).removesLayer3;
}

/**
 * The machine-config input for a MachineNetwork: its spec snapshot with the allocated addresses
 * filled in per (port, VLAN). Physical ports the spec lists without `bonded` follow their bond
 * (metal-api's port layout: on 4-port plans eth1 and eth3 follow bond1).
 */
export function networkConfigOf(
  spec: Pick<MachineNetworkSpec, 'ports' | 'os'>,
  addresses: readonly AddressRecord[],
  metadataUrl: string,
): MachineNetworkConfig {
  const ports: PortConfig[] = resolvePorts(spec.ports).ports.map(({ port, bonded, layer2 }) => {
    return {
      name: port.name,
      bonded,
      layer2,
      vlans: (port.vlans ?? []).map((vlan) => ({
        vxlan: vlan.vxlan,
        native: vlan.native ?? false,
        addresses: addresses
          .filter((a) => a.port === port.name && a.vxlan === vlan.vxlan)
          .map((a) => ({ address: a.address, prefix: a.prefix, ...(a.gateway === undefined ? {} : { gateway: a.gateway }) })),
        routes: (vlan.routes ?? []).map((r) => ({ to: r.to, via: r.via, ...(r.metric === undefined ? {} : { metric: r.metric }) })),
        ...(vlan.mtu === undefined ? {} : { mtu: vlan.mtu }),
        ...(vlan.nameservers === undefined
          ? {}
          : {
              nameservers: {
                addresses: vlan.nameservers.addresses ?? [],
                ...(vlan.nameservers.search === undefined ? {} : { search: vlan.nameservers.search }),
              },
            }),
      })),
    };
  });
  return { ports, renderer: spec.os?.renderer ?? 'ifupdown', metadataUrl };
}
