import type { Vrf } from '../models.js';
import type { SimulatorStore } from '../store.js';
import type { VrfWire } from '../wire.js';
import { hrefOf, link, renderMetro } from './common.js';

export function renderVrf(store: SimulatorStore, v: Vrf): VrfWire {
  return {
    id: v.id,
    href: hrefOf('vrfs', v.id),
    name: v.name,
    description: v.description,
    ip_ranges: [...v.ipRanges],
    local_asn: v.localAsn,
    bill: false,
    bgp_dynamic_neighbors_enabled: v.bgpDynamicNeighborsEnabled,
    bgp_dynamic_neighbors_export_route_map: v.bgpDynamicNeighborsExportRouteMap,
    bgp_dynamic_neighbors_bfd_enabled: v.bgpDynamicNeighborsBfdEnabled,
    metro: renderMetro(store.metroOf(v.metroCode)),
    project: link('projects', v.projectId),
    virtual_circuits: [],
    tags: [...v.tags],
    created_at: v.createdAt,
    updated_at: v.updatedAt,
  };
}
