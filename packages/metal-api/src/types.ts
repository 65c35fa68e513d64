// Wire types for the Equinix Metal objects this project reads and writes. Names and fields follow
// the schemas in shared/equinix-metal-openapi/openapi3.yaml (components.schemas.<Name>); only the
// fields we use or show are declared, every one optional as in the spec (the API omits fields
// freely and returns `{href}` stubs for objects that were not `include`d).

/** `Href`: a link to an object that was not included in the response. */
export interface Href {
  href: string;
}

/** `Meta`: pagination data on list responses. */
export interface Meta {
  first?: Href;
  last?: Href;
  next?: Href;
  previous?: Href;
  self?: Href;
  total?: number;
  current_page?: number;
  last_page?: number;
}

/** `Error`: the body of a 4xx/5xx answer (one of the two fields, sometimes both). */
export interface ErrorBody {
  error?: string;
  errors?: string[];
}

/** `Metro` (also `Device_metro`, `IPReservation_metro`). */
export interface Metro {
  id?: string;
  code?: string;
  name?: string;
  country?: string;
  href?: string;
}

/** `Project`, reduced to what we show. */
export interface Project {
  id?: string;
  name?: string;
  href?: string;
}

// ---------------------------------------------------------------- devices

export const DEVICE_STATES = [
  'queued',
  'provisioning',
  'deprovisioning',
  'reinstalling',
  'active',
  'inactive',
  'failed',
  'powering_on',
  'powering_off',
  'deleted',
] as const;
export type DeviceState = (typeof DEVICE_STATES)[number];

/** `IPAssignment`: an address assigned to a device. */
export interface IPAssignment {
  id?: string;
  address?: string;
  address_family?: number;
  cidr?: number;
  gateway?: string;
  netmask?: string;
  network?: string;
  public?: boolean;
  management?: boolean;
  enabled?: boolean;
  global_ip?: boolean;
  manageable?: boolean;
  state?: 'pending' | 'active' | 'deleting';
  type?: 'IPAssignment';
  href?: string;
}

/** `Device`. */
export interface Device {
  id?: string;
  href?: string;
  short_id?: string;
  hostname?: string;
  description?: string;
  state?: DeviceState;
  billing_cycle?: string;
  metro?: Metro;
  plan?: { id?: string; slug?: string; name?: string; href?: string };
  operating_system?: { id?: string; slug?: string; distro?: string; version?: string; href?: string };
  network_frozen?: boolean;
  network_ports?: Port[];
  ip_addresses?: IPAssignment[];
  bonding_mode?: number;
  userdata?: string;
  customdata?: Record<string, unknown>;
  tags?: string[];
  locked?: boolean;
  switch_uuid?: string;
  project?: Project;
  project_lite?: Href;
  created_at?: string;
  updated_at?: string;
}

/** `DeviceList`. */
export interface DeviceList {
  devices?: Device[];
  meta?: Meta;
}

/** `DeviceUpdateInput`. */
export interface DeviceUpdateInput {
  always_pxe?: boolean;
  billing_cycle?: string;
  customdata?: Record<string, unknown>;
  description?: string;
  hostname?: string;
  firmware_set_id?: string;
  ipxe_script_url?: string;
  locked?: boolean;
  network_frozen?: boolean;
  spot_instance?: boolean;
  tags?: string[];
  userdata?: string;
}

/** `IPAddress`: an address request in `DeviceCreateInput.ip_addresses`. */
export interface IPAddressRequest {
  address_family?: 4 | 6;
  cidr?: number;
  ip_reservations?: string[];
  public?: boolean;
}

/** `DeviceCreateInMetroInput` (= `MetroInput` + `DeviceCreateInput`); the facility variant is deprecated. */
export interface DeviceCreateInMetroInput {
  metro: string;
  plan: string;
  operating_system: string;
  hostname?: string;
  description?: string;
  billing_cycle?: 'hourly' | 'daily' | 'monthly' | 'yearly';
  userdata?: string;
  customdata?: Record<string, unknown>;
  tags?: string[];
  ipxe_script_url?: string;
  always_pxe?: boolean;
  hardware_reservation_id?: string;
  network_frozen?: boolean;
  ip_addresses?: IPAddressRequest[];
  private_ipv4_subnet_size?: number;
  public_ipv4_subnet_size?: number;
  locked?: boolean;
  spot_instance?: boolean;
  no_ssh_keys?: boolean;
  project_ssh_keys?: string[];
  user_ssh_keys?: string[];
}

/** `Event`: one entry of a device's event log (user-state messages arrive here). */
export interface Event {
  id?: string;
  type?: string;
  state?: string;
  body?: string;
  interpolated?: string;
  created_at?: string;
  href?: string;
  ip?: string;
}

/** `EventList`. */
export interface EventList {
  events?: Event[];
  meta?: Meta;
}

// ---------------------------------------------------------------- ports

export const PORT_NETWORK_TYPES = ['layer2-bonded', 'layer2-individual', 'layer3', 'hybrid', 'hybrid-bonded'] as const;
/** `Port.network_type`: the composite type the API reports on a port. */
export type PortNetworkType = (typeof PORT_NETWORK_TYPES)[number];

/** `PortData`. */
export interface PortData {
  mac?: string;
  bonded?: boolean;
}

/** `BondPortData`: the bond a physical port belongs to. */
export interface BondPortData {
  id?: string;
  name?: string;
}

/** `Port`: a bond port (`NetworkBondPort`, bond0) or a physical port (`NetworkPort`, eth0...). */
export interface Port {
  id?: string;
  href?: string;
  name?: string;
  type?: 'NetworkPort' | 'NetworkBondPort';
  network_type?: PortNetworkType;
  data?: PortData;
  bond?: BondPortData;
  disbond_operation_supported?: boolean;
  native_virtual_network?: VirtualNetwork;
  virtual_networks?: VirtualNetwork[];
}

/** `PortAssignInput`: body of assign, unassign and convert/layer-2. */
export interface PortAssignInput {
  /** VLAN UUID or the VLAN number itself (e.g. "1001"). */
  vnid?: string;
}

/** `PortConvertLayer3Input_request_ips_inner`. */
export interface PortConvertLayer3RequestIp {
  address_family?: number;
  public?: boolean;
}

/** `PortConvertLayer3Input`. */
export interface PortConvertLayer3Input {
  request_ips?: PortConvertLayer3RequestIp[];
}

/** `PortVlanAssignmentBatchCreateInput_vlan_assignments_inner`. */
export interface PortVlanAssignmentBatchCreateInputItem {
  /** VLAN UUID or VLAN number as a string. */
  vlan?: string;
  state?: 'assigned' | 'unassigned';
  native?: boolean;
}

/** `PortVlanAssignmentBatchCreateInput`. */
export interface PortVlanAssignmentBatchCreateInput {
  vlan_assignments?: PortVlanAssignmentBatchCreateInputItem[];
}

export const VLAN_BATCH_STATES = ['queued', 'in_progress', 'completed', 'failed'] as const;
export type PortVlanAssignmentBatchState = (typeof VLAN_BATCH_STATES)[number];

/** `PortVlanAssignmentBatch`: an asynchronous set of VLAN (un)assignments on one port. */
export interface PortVlanAssignmentBatch {
  id?: string;
  state?: PortVlanAssignmentBatchState;
  error_messages?: string[];
  quantity?: number;
  port?: Port;
  project?: Href;
  vlan_assignments?: { id?: string; native?: boolean; state?: 'assigned' | 'unassigned'; vlan?: number }[];
  created_at?: string;
  updated_at?: string;
}

/** `PortVlanAssignmentBatchList`. */
export interface PortVlanAssignmentBatchList {
  batches?: PortVlanAssignmentBatch[];
}

/** `PortVlanAssignment`: one current VLAN assignment of a port. */
export interface PortVlanAssignment {
  id?: string;
  native?: boolean;
  state?: 'assigned' | 'unassigning';
  vlan?: number;
  port?: Href;
  virtual_network?: Href;
  created_at?: string;
  updated_at?: string;
}

/** `PortVlanAssignmentList`. */
export interface PortVlanAssignmentList {
  vlan_assignments?: PortVlanAssignment[];
}

// ---------------------------------------------------------------- virtual networks (VLANs)

/** `MetalGatewayLite`: the gateway summary embedded in VLANs and reservations. */
export interface MetalGatewayLite {
  id?: string;
  gateway_address?: string;
  state?: 'ready' | 'active' | 'deleting';
  vlan?: number;
  href?: string;
  created_at?: string;
  updated_at?: string;
}

/** `VirtualNetwork`: a VLAN, metro-local, identified by UUID and by `vxlan` (the 802.1Q tag). */
export interface VirtualNetwork {
  id?: string;
  href?: string;
  vxlan?: number;
  description?: string;
  metro?: Metro;
  metro_code?: string;
  facility?: Href;
  tags?: string[];
  assigned_to?: Project;
  assigned_to_virtual_circuit?: boolean;
  instances?: Device[];
  metal_gateways?: MetalGatewayLite[];
  created_at?: string;
}

/** `VirtualNetworkList` (not paginated: no `meta`). */
export interface VirtualNetworkList {
  virtual_networks?: VirtualNetwork[];
}

/** `VirtualNetworkCreateInput` (the project comes from the path). */
export interface VirtualNetworkCreateInput {
  metro?: string;
  /** 2-3999, unique per project and metro; the API picks one in 1000-1999 when omitted. */
  vxlan?: number;
  description?: string;
  tags?: string[];
}

// ---------------------------------------------------------------- VRFs

/** `Vrf`. */
export interface Vrf {
  id?: string;
  href?: string;
  name?: string;
  description?: string;
  ip_ranges?: string[];
  local_asn?: number;
  metro?: Metro;
  project?: Project;
  bill?: boolean;
  bgp_dynamic_neighbors_enabled?: boolean;
  tags?: string[];
  created_at?: string;
  updated_at?: string;
}

/** `VrfCreateInput`. */
export interface VrfCreateInput {
  name: string;
  metro: string;
  description?: string;
  /** IPv4 /8-/29 or IPv6 /59-/64 ranges. */
  ip_ranges?: string[];
  local_asn?: number;
  tags?: string[];
  bgp_dynamic_neighbors_enabled?: boolean;
  bgp_dynamic_neighbors_export_route_map?: boolean;
  bgp_dynamic_neighbors_bfd_enabled?: boolean;
}

/** `VrfList`. */
export interface VrfList {
  vrfs?: Vrf[];
  meta?: Meta;
}

// ---------------------------------------------------------------- IP reservations

interface IPReservationCommon {
  id?: string;
  href?: string;
  address?: string;
  address_family?: number;
  cidr?: number;
  netmask?: string;
  network?: string;
  gateway?: string;
  state?: string;
  details?: string;
  tags?: string[];
  public?: boolean;
  management?: boolean;
  manageable?: boolean;
  metal_gateway?: MetalGatewayLite;
  metro?: Metro;
  project?: Project;
  customdata?: Record<string, unknown>;
  created_at?: string;
}

/** `IPReservation`: a public, private or global block (every type except `vrf`). */
export interface IPReservation extends IPReservationCommon {
  type: 'global_ipv4' | 'public_ipv4' | 'private_ipv4' | 'public_ipv6';
  quantity?: number;
  available?: string;
  assignments?: IPAssignment[];
  global_ip?: boolean;
  enabled?: boolean;
}

/** `VrfIpReservation`: a subnet carved from a VRF's ranges. */
export interface VrfIpReservation extends IPReservationCommon {
  type: 'vrf';
  vrf?: Vrf;
}

/** Either reservation kind, as `GET /projects/{id}/ips` and `GET /ips/{id}` return them. */
export type AnyIPReservation = IPReservation | VrfIpReservation;

/** `IPReservationList`. */
export interface IPReservationList {
  ip_addresses?: AnyIPReservation[];
  meta?: Meta;
}

/** `VrfIpReservationList` (not paginated). */
export interface VrfIpReservationList {
  ip_addresses?: VrfIpReservation[];
}

/** `IPReservationRequestInput`: a public/private/global block. */
export interface IPReservationRequestInput {
  type: 'global_ipv4' | 'public_ipv4' | 'private_ipv4' | 'public_ipv6';
  quantity: number;
  metro?: string;
  comments?: string;
  details?: string;
  tags?: string[];
  customdata?: Record<string, unknown>;
  fail_on_approval_required?: boolean;
}

/** `VrfIpReservationCreateInput`: a subnet inside a VRF range (IPv4 /22-/29, IPv6 /64). */
export interface VrfIpReservationCreateInput {
  type: 'vrf';
  vrf_id: string;
  network: string;
  cidr: number;
  details?: string;
  tags?: string[];
  customdata?: Record<string, unknown>;
}

export type IPReservationCreateInput = IPReservationRequestInput | VrfIpReservationCreateInput;

/** The `types` filter of `findIPReservations`. */
export type IPReservationType = 'global_ipv4' | 'private_ipv4' | 'public_ipv4' | 'public_ipv6' | 'vrf';

// ---------------------------------------------------------------- Metal Gateways

interface MetalGatewayCommon {
  id?: string;
  href?: string;
  state?: 'ready' | 'active' | 'deleting';
  virtual_network?: VirtualNetwork;
  project?: Project;
  created_by?: Href;
  created_at?: string;
  updated_at?: string;
}

/** `MetalGateway`: a gateway backed by a public or private IP reservation. */
export interface MetalGateway extends MetalGatewayCommon {
  ip_reservation?: IPReservation;
}

/** `VrfMetalGateway`: a gateway backed by a VRF IP reservation. */
export interface VrfMetalGateway extends MetalGatewayCommon {
  ip_reservation?: VrfIpReservation;
  vrf?: Vrf;
}

export type AnyMetalGateway = MetalGateway | VrfMetalGateway;

/** `MetalGatewayList`. */
export interface MetalGatewayList {
  metal_gateways?: AnyMetalGateway[];
  meta?: Meta;
}

/** `MetalGatewayCreateInput`: backed by an existing reservation or a new private block. */
export interface MetalGatewayCreateInput {
  virtual_network_id: string;
  ip_reservation_id?: string;
  private_ipv4_subnet_size?: 8 | 16 | 32 | 64 | 128;
}

/** `VrfMetalGatewayCreateInput`: backed by a VRF IP reservation in the VLAN's metro. */
export interface VrfMetalGatewayCreateInput {
  virtual_network_id: string;
  ip_reservation_id: string;
}

export type AnyMetalGatewayCreateInput = MetalGatewayCreateInput | VrfMetalGatewayCreateInput;
