// The JSON shapes the simulator sends, named after the spec's schemas. Each is the subset of the
// schema the simulator fills; the contract validator checks them against the spec in tests.

export interface HrefWire {
  href: string;
}

export interface MetroWire {
  id: string;
  code: string;
  name: string;
  country: string;
  href: string;
}

/** A device's facility (the API kept reporting it after facilities gave way to metros). */
export interface FacilityWire {
  id: string;
  code: string;
  name: string;
  features: string[];
  metro: MetroWire;
}

export interface ProjectWire {
  id: string;
  href: string;
  name: string;
  created_at: string;
  updated_at: string;
  type: 'default';
  tags: string[];
  backend_transfer_enabled: boolean;
  devices: HrefWire[];
}

export interface IpAssignmentWire {
  id: string;
  href: string;
  type: 'IPAssignment';
  address_family: number;
  address: string;
  network: string;
  cidr: number;
  netmask: string;
  gateway: string;
  public: boolean;
  management: boolean;
  manageable: boolean;
  enabled: boolean;
  global_ip: boolean;
  state: 'active';
  created_at: string;
  assigned_to: HrefWire;
  metro: MetroWire;
  parent_block: { network: string; netmask: string; cidr: number; href: string };
}

export interface VirtualNetworkWire {
  id: string;
  href: string;
  vxlan: number;
  description?: string;
  metro_code?: string;
  metro?: MetroWire;
  assigned_to?: HrefWire;
  assigned_to_virtual_circuit?: boolean;
  created_at?: string;
  tags?: string[];
  instances?: HrefWire[];
  metal_gateways?: MetalGatewayLiteWire[];
}

export interface PortWire {
  id: string;
  href: string;
  name: string;
  type: 'NetworkPort' | 'NetworkBondPort';
  network_type?: 'layer3' | 'hybrid' | 'hybrid-bonded' | 'layer2-bonded' | 'layer2-individual';
  data: { bonded: boolean; mac?: string };
  bond?: { id: string; name: string };
  disbond_operation_supported: boolean;
  virtual_networks: (HrefWire | VirtualNetworkWire)[];
  native_virtual_network?: HrefWire | VirtualNetworkWire;
}

export interface EventWire {
  id: string;
  href: string;
  type: string;
  state: string;
  body: string;
  interpolated: string;
  created_at: string;
  relationships: HrefWire[];
}

export interface DeviceWire {
  id: string;
  href: string;
  short_id: string;
  hostname: string;
  description: string;
  state: string;
  billing_cycle: string;
  always_pxe: boolean;
  locked: boolean;
  network_frozen: boolean;
  /** Not in the spec's Device schema (which allows extra fields); the API reported it on devices. */
  network_type: string;
  bonding_mode: number;
  userdata: string;
  customdata: Record<string, unknown>;
  tags: string[];
  created_at: string;
  updated_at: string;
  iqn: string;
  switch_uuid: string;
  provisioning_percentage: number;
  metro: MetroWire;
  facility: FacilityWire;
  plan: { id: string; slug: string; name: string; class: string; line: string; type: 'standard'; href: string };
  operating_system: { id: string; slug: string; name: string; distro: string; version: string };
  project: HrefWire | ProjectWire;
  project_lite: HrefWire;
  ip_addresses: IpAssignmentWire[];
  network_ports: PortWire[];
  ssh_keys: HrefWire[];
  volumes: HrefWire[];
  actions: { type: string; name: string }[];
}

export interface MetalGatewayLiteWire {
  id: string;
  href: string;
  state: string;
  vlan: number;
  gateway_address: string;
  created_at: string;
  updated_at: string;
}

export interface VrfWire {
  id: string;
  href: string;
  name: string;
  description: string;
  ip_ranges: string[];
  local_asn: number;
  bill: boolean;
  bgp_dynamic_neighbors_enabled: boolean;
  bgp_dynamic_neighbors_export_route_map: boolean;
  bgp_dynamic_neighbors_bfd_enabled: boolean;
  metro: MetroWire;
  project: HrefWire;
  virtual_circuits: HrefWire[];
  tags: string[];
  created_at: string;
  updated_at: string;
}

/** Both IPReservation (strict: additionalProperties false) and VrfIpReservation. */
export interface IpReservationWire {
  id: string;
  href: string;
  type: string;
  address_family: number;
  network: string;
  cidr: number;
  netmask: string;
  gateway: string;
  address: string;
  public: boolean;
  management: boolean;
  manageable: boolean;
  bill: boolean;
  state: string;
  details: string;
  tags: string[];
  customdata: Record<string, unknown>;
  created_at: string;
  metro: MetroWire;
  project: HrefWire;
  metal_gateway?: MetalGatewayLiteWire;
  // public reservations only
  addon?: boolean;
  global_ip?: boolean;
  enabled?: boolean;
  assignments?: HrefWire[];
  project_lite?: HrefWire;
  // VRF reservations only
  vrf?: VrfWire;
}

export interface MetalGatewayWire {
  id: string;
  href: string;
  state: string;
  created_at: string;
  updated_at: string;
  project: HrefWire;
  virtual_network: VirtualNetworkWire;
  ip_reservation: IpReservationWire;
  vrf?: VrfWire;
}

export interface BatchWire {
  id: string;
  state: string;
  quantity: number;
  error_messages: string[];
  created_at: string;
  updated_at: string;
  vlan_assignments: { id: string; vlan: number; state: 'assigned' | 'unassigned'; native: boolean }[];
  port: HrefWire | PortWire;
  project: HrefWire;
}

export interface PortVlanAssignmentWire {
  id: string;
  vlan: number;
  native: boolean;
  state: 'assigned' | 'unassigning';
  created_at: string;
  updated_at: string;
  port: HrefWire;
  virtual_network: HrefWire;
}
