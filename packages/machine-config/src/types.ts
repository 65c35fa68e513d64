// What a machine's network should look like, keyed by Metal port name. The network controller maps
// its MachineNetwork (spec snapshot + allocated addresses) to these types; nothing here knows about
// Kubernetes.

/** The OS network stack the rendered files are for. */
export type RendererName = 'ifupdown' | 'netplan' | 'networkd';

export const RENDERER_NAMES: readonly RendererName[] = ['ifupdown', 'netplan', 'networkd'];

/** One address on an interface, IPv4 or IPv6. `gateway` is informational: no default route is made from it. */
export interface NetworkAddress {
  address: string;
  prefix: number;
  gateway?: string;
}

/** A route out of a VLAN interface. `to` is a CIDR or `default`; the family follows `via`. */
export interface NetworkRoute {
  to: string;
  via: string;
  metric?: number;
}

export interface Nameservers {
  addresses: string[];
  search?: string[];
}

/** A VLAN on a port. A native VLAN is untagged: its addresses go on the port's interface itself. */
export interface VlanConfig {
  vxlan: number;
  native: boolean;
  addresses: NetworkAddress[];
  routes: NetworkRoute[];
  mtu?: number;
  nameservers?: Nameservers;
}

/**
 * A Metal port as the Metal API names it (`bond0`, `eth0`, `eth1`). A physical port with
 * `bonded: false` leaves the OS bond; a bond port with `bonded: false` (layer2-individual) has all
 * its members leave it.
 */
export interface PortConfig {
  name: string;
  bonded: boolean;
  layer2: boolean;
  vlans: VlanConfig[];
}

export interface MachineNetworkConfig {
  ports: PortConfig[];
  renderer: RendererName;
  /** Where the boot script reads the metadata document, e.g. https://metadata.platformequinix.com/metadata. */
  metadataUrl: string;
}

/** One file the boot script writes, after replacing the port placeholders in its path and content. */
export interface RenderedFile {
  path: string;
  content: string;
  /** Octal file mode as a string, e.g. `0644`. */
  mode: string;
}

/** How the boot script treats one Metal port. */
export interface BootPort {
  name: string;
  /** `bond` for bond ports (resolved through the metadata's `interfaces[].bond`), `nic` otherwise. */
  kind: 'bond' | 'nic';
  /** True when the port (a nic) or every member (a bond) must leave the OS bond. */
  detach: boolean;
}

/**
 * The whole result of rendering: the files with placeholders, the ports the boot script must resolve,
 * and what it needs to apply them. Serialised as JSON into the user data (`/opt/metal-l2/netcfg.json`).
 */
export interface RenderedNetwork {
  version: 1;
  renderer: RendererName;
  metadataUrl: string;
  ports: BootPort[];
  /** OS interface names (placeholders) the renderer configured, in apply order (parents first). */
  interfaces: string[];
  files: RenderedFile[];
}
