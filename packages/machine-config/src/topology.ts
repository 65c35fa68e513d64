// From Metal ports to the OS interfaces the renderers write: parents (a bond or a NIC that left the
// bond) and tagged VLAN sub-interfaces. Names are placeholders (`@port:eth1@`, `@port:bond0@.1000`)
// because the controller renders before the device exists; the boot script substitutes the OS names.
import type { BootPort, NetworkRoute, PortConfig, VlanConfig } from './types.js';

/** Placeholder for the OS interface of a Metal port. Contains no `{`, so neither Go templates nor Jinja see it. */
export function portPlaceholder(port: string): string {
  return `@port:${port}@`;
}

/** Placeholder for the basename of the systemd-networkd `.network` file that currently manages a port. */
export function networkFilePlaceholder(port: string): string {
  return `@netfile:${port}@`;
}

/** Every placeholder the boot script knows: `@port:<name>@` and `@netfile:<name>@`. */
export const PLACEHOLDER_PATTERN = /@(port|netfile):([a-z0-9]+)@/g;

/** Bond ports are named `bond<N>` by the Metal API. */
export function isBondPort(name: string): boolean {
  return /^bond[0-9]+$/.test(name);
}

/** An OS interface the renderers configure. */
export interface PlannedInterface {
  /** OS interface name with placeholders: `@port:eth1@` or `@port:bond0@.1000`. */
  name: string;
  /** The Metal port it belongs to. */
  port: string;
  role: 'parent' | 'vlan';
  portKind: 'bond' | 'nic';
  /** A parent NIC that left the OS bond: nothing else configures it, so our files own it. */
  detached: boolean;
  /** For a VLAN: its parent interface name and id. */
  parent?: string;
  vlanId?: number;
  /** Tagged VLAN ids on a parent. */
  taggedVlanIds: number[];
  /** The VLAN whose addresses, routes, MTU and nameservers sit on this interface (native on a parent). */
  vlan?: VlanConfig;
  /** The MTU the link is set to, when one is asked for (see parentMtu); undefined leaves it as it is. */
  mtu?: number;
  /** For a VLAN: its parent's MTU when we set one (it must be raised before the VLAN can be). */
  parentMtu?: number;
}

/** The MTU Metal's ports come up with. */
export const DEFAULT_MTU = 1500;

/**
 * A parent's MTU: a VLAN cannot be larger than its parent, so the parent takes the largest MTU of
 * its tagged VLANs when that is above its own (the native VLAN's, or Metal's 1500). A smaller one
 * never lowers it: the parent may carry other traffic (bond0's public addresses).
 */
export function parentMtu(native: VlanConfig | undefined, tagged: readonly VlanConfig[]): number | undefined {
  const largest = Math.max(...tagged.map((v) => v.mtu ?? 0));
  return largest > (native?.mtu ?? DEFAULT_MTU) ? largest : native?.mtu;
}

/**
 * A tagged VLAN's MTU: its own, else Metal's 1500 when its parent is set above that. The kernel
 * gives a VLAN created without one its parent's MTU, so a VLAN beside a jumbo one would be 9000
 * while its peers are at 1500.
 */
export function vlanMtu(vlan: VlanConfig, parent: number | undefined): number | undefined {
  return vlan.mtu ?? (parent !== undefined && parent > DEFAULT_MTU ? DEFAULT_MTU : undefined);
}

export function bootPorts(ports: readonly PortConfig[]): BootPort[] {
  return ports.map((p) => ({ name: p.name, kind: isBondPort(p.name) ? 'bond' : 'nic', detach: !p.bonded }));
}

/** Parents first (in port order), then their tagged VLANs in the order listed. Ports without VLANs are skipped. */
export function planInterfaces(ports: readonly PortConfig[]): PlannedInterface[] {
  const parents: PlannedInterface[] = [];
  const vlans: PlannedInterface[] = [];
  for (const port of ports) {
    if (port.vlans.length === 0) continue;
    const parentName = portPlaceholder(port.name);
    const portKind = isBondPort(port.name) ? 'bond' : 'nic';
    const native = port.vlans.find((v) => v.native);
    const tagged = port.vlans.filter((v) => !v.native);
    const mtu = parentMtu(native, tagged);
    parents.push({
      name: parentName,
      port: port.name,
      role: 'parent',
      portKind,
      detached: portKind === 'nic' && !port.bonded,
      taggedVlanIds: tagged.map((v) => v.vxlan),
      ...(native === undefined ? {} : { vlan: native }),
      ...(mtu === undefined ? {} : { mtu }),
    });
    for (const vlan of tagged) {
      const own = vlanMtu(vlan, mtu);
      vlans.push({
        name: `${parentName}.${vlan.vxlan}`,
        port: port.name,
        role: 'vlan',
        portKind,
        detached: false,
        parent: parentName,
        vlanId: vlan.vxlan,
        taggedVlanIds: [],
        vlan,
        ...(own === undefined ? {} : { mtu: own }),
        ...(mtu === undefined ? {} : { parentMtu: mtu }),
      });
    }
  }
  return [...parents, ...vlans];
}

export function isIPv6(address: string): boolean {
  return address.includes(':');
}

/** `default` becomes the family's default route (`0.0.0.0/0` or `::/0`), by the family of `via`. */
export function routeDestination(route: NetworkRoute): string {
  if (route.to !== 'default') return route.to;
  return isIPv6(route.via) ? '::/0' : '0.0.0.0/0';
}

/** A file-name-safe form of an interface name with placeholders: `@port:bond0@.1000` → `bond0.1000`. */
export function interfaceFileStem(iface: PlannedInterface): string {
  return iface.vlanId === undefined ? iface.port : `${iface.port}.${iface.vlanId}`;
}
