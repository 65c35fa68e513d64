import type { IpReservation } from '../models.js';
import type { SimulatorStore } from '../store.js';
import type { IpReservationWire } from '../wire.js';
import { blockFacts, hrefOf, link, renderMetro } from './common.js';
import { renderGatewayLite } from './virtual-network.js';
import { renderVrf } from './vrf.js';

/**
 * A reservation: `VrfIpReservation` for type vrf, else `IPReservation`, whose schema forbids
 * unknown fields, so each variant carries exactly its own fields.
 */
export function renderReservation(store: SimulatorStore, r: IpReservation, opts: { readonly withGateway: boolean }): IpReservationWire {
  const facts = blockFacts(r.family, r.network, r.prefix);
  const gateway = store.gatewayOfReservation(r.id);
  const wire: IpReservationWire = {
    id: r.id,
    href: hrefOf('ips', r.id),
    type: r.type,
    address_family: r.family,
    network: facts.network,
    cidr: r.prefix,
    netmask: facts.netmask,
    // For reservations the gateway is the block's first usable address (the Metal Gateway's);
    // a single address (an elastic IP, /32 or /128) is its own gateway, as the API showed it.
    gateway:
      r.prefix === (r.family === 4 ? 32 : 128)
        ? facts.network
        : blockFacts(r.family, r.network, Math.min(r.prefix, r.family === 4 ? 30 : 126)).gateway,
    address: facts.network,
    public: r.type === 'public_ipv4' || r.type === 'public_ipv6' || r.type === 'global_ipv4',
    management: false,
    manageable: true,
    bill: r.type !== 'vrf' && r.type !== 'private_ipv4',
    state: 'created',
    details: r.details,
    tags: [...r.tags],
    customdata: r.customdata,
    created_at: r.createdAt,
    metro: renderMetro(store.metroOf(r.metroCode)),
    project: link('projects', r.projectId),
  };
  if (opts.withGateway && gateway !== undefined) wire.metal_gateway = renderGatewayLite(store, gateway.id);
  if (r.type === 'vrf') {
    const vrf = r.vrfId === undefined ? undefined : store.vrfs.get(r.vrfId);
    if (vrf === undefined) throw new Error(`internal: VRF reservation ${r.id} has no VRF`);
    wire.vrf = renderVrf(store, vrf);
  } else {
    wire.addon = true;
    wire.global_ip = r.type === 'global_ipv4';
    wire.enabled = true;
    // Assignments made from this reservation (createIPAssignment), as links.
    wire.assignments = [...store.devices.values()].flatMap((d) =>
      d.ipAssignments.filter((a) => a.reservationId === r.id).map((a) => ({ href: `/metal/v1/ips/${a.id}` })),
    );
    wire.project_lite = link('projects', r.projectId);
  }
  return wire;
}
