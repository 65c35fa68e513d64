import type { VirtualNetwork } from '../models.js';
import type { SimulatorStore } from '../store.js';
import type { MetalGatewayLiteWire, VirtualNetworkWire } from '../wire.js';
import { blockFacts, hrefOf, link, renderMetro } from './common.js';

/** A VLAN: its devices as `{href}` stubs and its Metal Gateway in the lite form. */
export function renderVirtualNetwork(store: SimulatorStore, v: VirtualNetwork): VirtualNetworkWire {
  const deviceIds = [...new Set(store.portsWithVlan(v.id).map((p) => p.deviceId))];
  return {
    ...renderVirtualNetworkLite(store, v),
    assigned_to: link('projects', v.projectId),
    assigned_to_virtual_circuit: false,
    created_at: v.createdAt,
    tags: [...v.tags],
    instances: deviceIds.map((id) => link('devices', id)),
    metal_gateways: store.gatewaysOfVlan(v.id).map((g) => renderGatewayLite(store, g.id)),
  };
}

/** A VLAN nested in another object (port, gateway): no back-links, so nothing recurses. */
export function renderVirtualNetworkLite(store: SimulatorStore, v: VirtualNetwork): VirtualNetworkWire {
  return {
    id: v.id,
    href: hrefOf('virtual-networks', v.id),
    vxlan: v.vxlan,
    description: v.description,
    metro_code: v.metroCode,
    metro: renderMetro(store.metroOf(v.metroCode)),
  };
}

/** `MetalGatewayLite`: what a VLAN or a reservation shows of its gateway. */
export function renderGatewayLite(store: SimulatorStore, gatewayId: string): MetalGatewayLiteWire {
  const g = store.gateways.get(gatewayId);
  if (g === undefined) throw new Error(`internal: unknown gateway ${gatewayId}`);
  const r = store.reservations.get(g.ipReservationId);
  if (r === undefined) throw new Error(`internal: gateway ${g.id} has no reservation`);
  return {
    id: g.id,
    href: hrefOf('metal-gateways', g.id),
    state: g.state,
    vlan: store.vlanOf(g.vlanId).vxlan,
    gateway_address: `${blockFacts(r.family, r.network, r.prefix).gateway}/${r.prefix}`,
    created_at: g.createdAt,
    updated_at: g.updatedAt,
  };
}
