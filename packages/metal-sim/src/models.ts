// The simulator's internal state. Plain records owned by the store; the wire shapes the API shows
// are produced from them by render/*. Keeping the two apart lets the store hold what the rules need
// (bond membership, layer-2 flag) while the wire keeps the spec's names and `{href}` stubs.

import type { AddressFamily } from './ip-math.js';

export interface Metro {
  readonly id: string;
  readonly code: string;
  readonly name: string;
  readonly country: string;
}

export interface Plan {
  readonly id: string;
  readonly slug: string;
  readonly name: string;
  /** 2 (bond0 = eth0+eth1) or 4 (bond0 = eth0+eth2, bond1 = eth1+eth3). */
  readonly portCount: 2 | 4;
}

/** An operating system a device can be created with (the API's `/operating-systems` catalogue). */
export interface OperatingSystem {
  readonly slug: string;
  readonly name: string;
  readonly distro: string;
  readonly version: string;
}

export interface Project {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
}

/** An API token and the projects it may touch ('all' is a user key that sees every project). */
export interface TokenGrant {
  readonly token: string;
  readonly projectIds: ReadonlySet<string> | 'all';
}

/** `deprovisioning`: deleted, on its way out (the spec's state); `deleted`: gone, no longer in the store. */
export type DeviceState = 'queued' | 'provisioning' | 'active' | 'failed' | 'deprovisioning' | 'deleted';

/** A device's address (management addresses come with the device; layer-2 conversion removes them). */
export interface IpAssignment {
  readonly id: string;
  readonly family: AddressFamily;
  readonly public: boolean;
  readonly management: boolean;
  /** The assigned block (a /31 or /127) as network + prefix. */
  readonly network: bigint;
  readonly prefix: number;
  /** The block it was carved from, shown as `parent_block`. */
  readonly parent: { readonly network: bigint; readonly prefix: number };
  readonly createdAt: string;
  /** Set when the address came from a reservation (createIPAssignment: an elastic IP), not with the device. */
  readonly reservationId?: string;
}

/** A device's BGP session with Metal's routers (createBgpSession); it goes with the device. */
export interface BgpSession {
  readonly id: string;
  readonly addressFamily: 'ipv4' | 'ipv6';
  readonly defaultRoute: boolean;
  readonly createdAt: string;
}

/** A project's BGP configuration (requestBgpConfig); Metal offers no way to remove it. */
export interface BgpConfig {
  readonly id: string;
  readonly projectId: string;
  readonly asn: number;
  readonly deploymentType: 'local' | 'global';
  /** The spec's statuses; `requested` is a global deployment waiting for Metal's review. */
  readonly status: 'requested' | 'enabled';
  readonly md5: string | undefined;
  readonly useCase: string | undefined;
  readonly createdAt: string;
}

export interface DeviceEvent {
  readonly id: string;
  readonly type: string;
  readonly state: string;
  readonly body: string;
  readonly interpolated: string;
  readonly createdAt: string;
}

export interface Device {
  readonly id: string;
  readonly shortId: string;
  readonly projectId: string;
  readonly planSlug: string;
  readonly metroCode: string;
  readonly operatingSystem: string;
  readonly createdAt: string;
  hostname: string;
  description: string;
  billingCycle: string;
  userdata: string;
  customdata: Record<string, unknown>;
  tags: string[];
  locked: boolean;
  networkFrozen: boolean;
  state: DeviceState;
  updatedAt: string;
  /** Port ids in display order: bonds first, then physical ports. */
  readonly portIds: readonly string[];
  ipAssignments: IpAssignment[];
  bgpSessions: BgpSession[];
  /** Newest last; rendered newest first as the API lists events. */
  events: DeviceEvent[];
  /** The VLANs' switch-side view needs the device's switch; one per device is enough here. */
  readonly switchUuid: string;
}

export interface VlanAssignment {
  readonly id: string;
  readonly vlanId: string;
  readonly createdAt: string;
}

export interface Port {
  readonly id: string;
  readonly deviceId: string;
  readonly name: string;
  readonly kind: 'bond' | 'physical';
  /** For a physical port, the bond it belongs to (it stays a member while disbonded). */
  readonly bondName: string;
  readonly mac: string | undefined;
  /** Physical ports only: whether the port is currently an active member of its bond. */
  bonded: boolean;
  /** Bond ports only: converted to layer 2 (no IP addresses on it). */
  layer2: boolean;
  vlans: VlanAssignment[];
  nativeVlanId: string | undefined;
}

export interface VirtualNetwork {
  readonly id: string;
  readonly projectId: string;
  readonly vxlan: number;
  readonly metroCode: string;
  readonly createdAt: string;
  description: string;
  tags: string[];
}

export interface Vrf {
  readonly id: string;
  readonly projectId: string;
  readonly metroCode: string;
  readonly createdAt: string;
  name: string;
  description: string;
  ipRanges: string[];
  localAsn: number;
  tags: string[];
  bgpDynamicNeighborsEnabled: boolean;
  bgpDynamicNeighborsExportRouteMap: boolean;
  bgpDynamicNeighborsBfdEnabled: boolean;
  updatedAt: string;
}

export type PublicReservationType = 'public_ipv4' | 'private_ipv4' | 'global_ipv4' | 'public_ipv6';

export interface IpReservation {
  readonly id: string;
  readonly projectId: string;
  readonly type: PublicReservationType | 'vrf';
  readonly vrfId: string | undefined;
  readonly family: AddressFamily;
  readonly network: bigint;
  readonly prefix: number;
  readonly metroCode: string;
  readonly createdAt: string;
  /** A private block a Metal Gateway created for itself (private_ipv4_subnet_size); it goes with the gateway. */
  readonly gatewayOwned: boolean;
  details: string;
  tags: string[];
  customdata: Record<string, unknown>;
}

export type MetalGatewayState = 'ready' | 'active' | 'deleting';

export interface MetalGateway {
  readonly id: string;
  readonly projectId: string;
  readonly vlanId: string;
  readonly ipReservationId: string;
  readonly createdAt: string;
  state: MetalGatewayState;
  updatedAt: string;
}

export type BatchState = 'queued' | 'in_progress' | 'completed' | 'failed';

export interface BatchItem {
  readonly id: string;
  readonly vlanId: string;
  readonly vxlan: number;
  readonly state: 'assigned' | 'unassigned';
  readonly native: boolean;
}

export interface VlanAssignmentBatch {
  readonly id: string;
  readonly portId: string;
  readonly projectId: string;
  readonly items: readonly BatchItem[];
  readonly createdAt: string;
  state: BatchState;
  errorMessages: string[];
  updatedAt: string;
}
