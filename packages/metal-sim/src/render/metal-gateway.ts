import type { MetalGateway } from '../models.js';
import type { SimulatorStore } from '../store.js';
import type { MetalGatewayWire } from '../wire.js';
import { hrefOf, link } from './common.js';
import { renderReservation } from './ip-reservation.js';
import { renderVirtualNetworkLite } from './virtual-network.js';
import { renderVrf } from './vrf.js';

/**
 * A gateway with its VLAN and reservation expanded. The reservation is always whole: the spec's
 * `MetalGateway | VrfMetalGateway` oneOf is told apart only by the reservation's `type`.
 */
export function renderMetalGateway(store: SimulatorStore, g: MetalGateway): MetalGatewayWire {
  const r = store.reservations.get(g.ipReservationId);
  if (r === undefined) throw new Error(`internal: gateway ${g.id} has no reservation`);
  const wire: MetalGatewayWire = {
    id: g.id,
    href: hrefOf('metal-gateways', g.id),
    state: g.state,
    created_at: g.createdAt,
    updated_at: g.updatedAt,
    project: link('projects', g.projectId),
    virtual_network: renderVirtualNetworkLite(store, store.vlanOf(g.vlanId)),
    ip_reservation: renderReservation(store, r, { withGateway: false }),
  };
  if (r.type === 'vrf' && r.vrfId !== undefined) {
    const vrf = store.vrfs.get(r.vrfId);
    if (vrf !== undefined) wire.vrf = renderVrf(store, vrf);
  }
  return wire;
}
