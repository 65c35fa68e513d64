import { param, requireGateway, requireProject } from '../access.js';
import { enforce, unprocessable } from '../errors.js';
import { json, route, type RouteContext, type RouteDef } from '../http.js';
import { bodyFields, optInteger, optString, reqString } from '../input.js';
import type { IpReservation, MetalGateway } from '../models.js';
import { paginate, readPage } from '../pagination.js';
import { renderMetalGateway } from '../render/metal-gateway.js';
import { checkGatewayReservation, checkGatewaySameMetro, checkOneGatewayPerVlan, checkPrivateSubnetSize } from '../rules/metal-gateway.js';

function createMetalGateway(ctx: RouteContext) {
  const project = requireProject(ctx, param(ctx, 'project_id'));
  const f = bodyFields(ctx.req);
  const vlanId = reqString(f, 'virtual_network_id');
  const vlan = ctx.store.vlans.get(vlanId);
  if (vlan === undefined || vlan.projectId !== project.id) throw unprocessable(`virtual network ${vlanId} not found in this project`);
  enforce(checkOneGatewayPerVlan({ vxlan: vlan.vxlan, existingGatewayIds: ctx.store.gatewaysOfVlan(vlan.id).map((g) => g.id) }));
  const reservationId = optString(f, 'ip_reservation_id');
  const privateSize = optInteger(f, 'private_ipv4_subnet_size');
  let reservation: IpReservation;
  if (reservationId !== undefined) {
    const r = ctx.store.reservations.get(reservationId);
    if (r === undefined || r.projectId !== project.id) throw unprocessable(`IP reservation ${reservationId} not found in this project`);
    enforce(
      checkGatewayReservation({
        type: r.type,
        prefix: r.prefix,
        family: r.family,
        usedByGatewayId: ctx.store.gatewayOfReservation(r.id)?.id,
      }),
    );
    enforce(checkGatewaySameMetro({ vlanMetro: vlan.metroCode, reservationMetro: r.metroCode }));
    reservation = r;
  } else if (privateSize !== undefined) {
    enforce(checkPrivateSubnetSize(privateSize));
    const block = ctx.store.allocateBlock('privateV4', 32 - Math.log2(privateSize));
    reservation = {
      id: ctx.store.ids.uuid(),
      projectId: project.id,
      type: 'private_ipv4',
      vrfId: undefined,
      family: 4,
      network: block.network,
      prefix: block.prefix,
      metroCode: vlan.metroCode,
      createdAt: ctx.store.nowIso(),
      gatewayOwned: true,
      details: `Metal Gateway for VLAN ${vlan.vxlan}`,
      tags: [],
      customdata: {},
    };
    ctx.store.addReservation(reservation);
  } else {
    throw unprocessable('ip_reservation_id or private_ipv4_subnet_size is required');
  }
  const now = ctx.store.nowIso();
  const gateway: MetalGateway = {
    id: ctx.store.ids.uuid(),
    projectId: project.id,
    vlanId: vlan.id,
    ipReservationId: reservation.id,
    createdAt: now,
    state: 'ready',
    updatedAt: now,
  };
  ctx.store.addGateway(gateway);
  return json(201, renderMetalGateway(ctx.store, gateway));
}

export const metalGatewayRoutes: readonly RouteDef[] = [
  route('findMetalGatewaysByProject', 'GET /projects/{project_id}/metal-gateways', (ctx) => {
    const project = requireProject(ctx, param(ctx, 'project_id'));
    const list = [...ctx.store.gateways.values()].filter((g) => g.projectId === project.id);
    const page = paginate(list, ctx.req, readPage(ctx.req, { perPage: 10, maxPerPage: 1000 }));
    return json(200, { metal_gateways: page.items.map((g) => renderMetalGateway(ctx.store, g)), meta: page.meta });
  }),
  route('createMetalGateway', 'POST /projects/{project_id}/metal-gateways', createMetalGateway),
  route('findMetalGatewayById', 'GET /metal-gateways/{id}', (ctx) =>
    json(200, renderMetalGateway(ctx.store, requireGateway(ctx, param(ctx, 'id')))),
  ),
  route('deleteMetalGateway', 'DELETE /metal-gateways/{id}', (ctx) => {
    // The API answers 202 with the gateway in state `deleting`; the simulator removes it at once so
    // the VLAN is free for the next call.
    const gateway = requireGateway(ctx, param(ctx, 'id'));
    const body = renderMetalGateway(ctx.store, { ...gateway, state: 'deleting' });
    ctx.store.deleteGateway(gateway);
    return json(202, body);
  }),
];
