import { canAccess, param, requireProject, requireReservation, requireVrf } from '../access.js';
import { enforce, notFound, unprocessable } from '../errors.js';
import { json, noContent, route, type RouteContext, type RouteDef } from '../http.js';
import { bodyFields, optRecord, optString, optStringArray, queryList, reqInteger, reqString, type Fields } from '../input.js';
import { formatCidr, parseAddress } from '../ip-math.js';
import type { IpReservation, Project, PublicReservationType } from '../models.js';
import { paginate, readPage } from '../pagination.js';
import { renderIpAssignment } from '../render/device.js';
import { renderReservation } from '../render/ip-reservation.js';
import { checkVrfReservation } from '../rules/vrf-reservation.js';

function requestVrfReservation(ctx: RouteContext, project: Project, f: Fields) {
  const vrfId = optString(f, 'vrf_id');
  if (vrfId === undefined) throw unprocessable('vrf_id is required for a vrf reservation');
  const vrf = ctx.store.vrfs.get(vrfId);
  if (vrf === undefined || vrf.projectId !== project.id) throw unprocessable(`VRF ${vrfId} not found in this project`);
  const network = reqString(f, 'network');
  const cidr = reqInteger(f, 'cidr');
  const existing = ctx.store.reservationsOfVrf(vrf.id).map(formatCidr);
  enforce(checkVrfReservation({ network, cidr, vrfRanges: vrf.ipRanges, existing }));
  const addr = parseAddress(network);
  if (addr === undefined) throw unprocessable(`network ${network} is not an IP address`);
  const r: IpReservation = {
    id: ctx.store.ids.uuid(),
    projectId: project.id,
    type: 'vrf',
    vrfId: vrf.id,
    family: addr.family,
    network: addr.value,
    prefix: cidr,
    metroCode: vrf.metroCode,
    createdAt: ctx.store.nowIso(),
    gatewayOwned: false,
    details: optString(f, 'details') ?? '',
    tags: optStringArray(f, 'tags') ?? [],
    customdata: optRecord(f, 'customdata') ?? {},
  };
  ctx.store.addReservation(r);
  return json(201, renderReservation(ctx.store, r, { withGateway: true }));
}

const PUBLIC_TYPES: readonly PublicReservationType[] = ['public_ipv4', 'private_ipv4', 'global_ipv4', 'public_ipv6'];

/** Public/private/global blocks: `quantity` addresses (a power of two) carved from the simulator's pools. */
function requestPublicReservation(ctx: RouteContext, project: Project, f: Fields) {
  const type = reqString(f, 'type') as PublicReservationType;
  if (!PUBLIC_TYPES.includes(type)) throw unprocessable(`type must be one of vrf, ${PUBLIC_TYPES.join(', ')}`);
  const quantity = reqInteger(f, 'quantity');
  const bits = Math.log2(quantity);
  if (!Number.isInteger(bits) || quantity < 1) throw unprocessable('quantity must be a power of two');
  const family = type === 'public_ipv6' ? 6 : 4;
  const prefix = (family === 4 ? 32 : 128) - bits;
  if (family === 4 && (prefix < 24 || prefix > 32)) throw unprocessable('quantity must be between 1 and 256 addresses');
  const metroRef = optString(f, 'metro');
  const metro = metroRef === undefined ? undefined : ctx.store.metroByRef(metroRef);
  if (type !== 'global_ipv4' && metro === undefined)
    throw unprocessable(metroRef === undefined ? 'metro is required' : `metro ${metroRef} not found`);
  const pool =
    type === 'public_ipv6' ? 'publicV6' : type === 'private_ipv4' ? 'privateV4' : type === 'global_ipv4' ? 'globalV4' : 'elasticV4';
  const block = ctx.store.allocateBlock(pool, prefix);
  const r: IpReservation = {
    id: ctx.store.ids.uuid(),
    projectId: project.id,
    type,
    vrfId: undefined,
    family,
    network: block.network,
    prefix: block.prefix,
    metroCode: (metro ?? [...ctx.store.metros.values()][0])?.code ?? '',
    createdAt: ctx.store.nowIso(),
    gatewayOwned: false,
    details: optString(f, 'details') ?? optString(f, 'comments') ?? '',
    tags: optStringArray(f, 'tags') ?? [],
    customdata: optRecord(f, 'customdata') ?? {},
  };
  ctx.store.addReservation(r);
  return json(201, renderReservation(ctx.store, r, { withGateway: true }));
}

export const ipReservationRoutes: readonly RouteDef[] = [
  route('findIPReservations', 'GET /projects/{id}/ips', (ctx) => {
    const project = requireProject(ctx, param(ctx, 'id'));
    const types = queryList(ctx.req.query, 'types');
    const list = [...ctx.store.reservations.values()].filter((r) => r.projectId === project.id && (types.size === 0 || types.has(r.type)));
    const page = paginate(list, ctx.req, readPage(ctx.req, { perPage: 250, maxPerPage: 1000 }));
    return json(200, { ip_addresses: page.items.map((r) => renderReservation(ctx.store, r, { withGateway: true })), meta: page.meta });
  }),
  route('requestIPReservation', 'POST /projects/{id}/ips', (ctx) => {
    const project = requireProject(ctx, param(ctx, 'id'));
    const f = bodyFields(ctx.req);
    return reqString(f, 'type') === 'vrf' ? requestVrfReservation(ctx, project, f) : requestPublicReservation(ctx, project, f);
  }),
  route('findIPAddressById', 'GET /ips/{id}', (ctx) => {
    const id = param(ctx, 'id');
    const r = ctx.store.reservations.get(id);
    if (r !== undefined) return json(200, renderReservation(ctx.store, requireReservation(ctx, id), { withGateway: true }));
    // A device's own address is an IPAssignment under the same path.
    for (const d of ctx.store.devices.values()) {
      const a = d.ipAssignments.find((x) => x.id === id);
      if (a === undefined) continue;
      if (!canAccess(ctx.grant, d.projectId)) throw notFound();
      return json(200, renderIpAssignment(ctx.store, d, a));
    }
    throw notFound();
  }),
  route('deleteIPAddress', 'DELETE /ips/{id}', (ctx) => {
    const id = param(ctx, 'id');
    if (ctx.store.reservations.has(id)) {
      ctx.store.deleteReservation(requireReservation(ctx, id));
      return noContent();
    }
    for (const d of ctx.store.devices.values()) {
      if (!d.ipAssignments.some((a) => a.id === id)) continue;
      if (!canAccess(ctx.grant, d.projectId)) throw notFound();
      ctx.store.removeIpAssignment(d, id);
      return noContent();
    }
    throw notFound();
  }),
  route('findVrfIpReservations', 'GET /vrfs/{id}/ips', (ctx) => {
    const vrf = requireVrf(ctx, param(ctx, 'id'));
    const list = ctx.store.reservationsOfVrf(vrf.id);
    return json(200, { ip_addresses: list.map((r) => renderReservation(ctx.store, r, { withGateway: true })) });
  }),
  route('findVrfIpReservation', 'GET /vrfs/{vrf_id}/ips/{id}', (ctx) => {
    const vrf = requireVrf(ctx, param(ctx, 'vrf_id'));
    const r = ctx.store.reservations.get(param(ctx, 'id'));
    if (r === undefined || r.vrfId !== vrf.id) throw notFound();
    return json(200, renderReservation(ctx.store, r, { withGateway: true }));
  }),
];
