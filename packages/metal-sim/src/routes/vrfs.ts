import { param, requireProject, requireVrf } from '../access.js';
import { enforce, unprocessable } from '../errors.js';
import { json, noContent, route, type RouteContext, type RouteDef } from '../http.js';
import { bodyFields, optBoolean, optInteger, optString, optStringArray, reqString } from '../input.js';
import type { Fields } from '../input.js';
import type { Vrf } from '../models.js';
import { singlePageMeta } from '../pagination.js';
import { renderVrf } from '../render/vrf.js';
import { checkVrfIpRanges } from '../rules/vrf-ip-ranges.js';
import { checkVrfQuota } from '../rules/vrf-quota.js';

/** VrfCreateInput.local_asn: 0-4294967295. The update's int32 is narrower in the spec; the same range is checked. */
function readLocalAsn(f: Fields): number | undefined {
  const asn = optInteger(f, 'local_asn');
  if (asn !== undefined && (asn < 0 || asn > 4294967295)) throw unprocessable('local_asn must be between 0 and 4294967295');
  return asn;
}

function createVrf(ctx: RouteContext) {
  const project = requireProject(ctx, param(ctx, 'id'));
  const f = bodyFields(ctx.req);
  const name = reqString(f, 'name');
  const metroRef = reqString(f, 'metro');
  const metro = ctx.store.metroByRef(metroRef);
  if (metro === undefined) throw unprocessable(`metro ${metroRef} not found`);
  const ipRanges = optStringArray(f, 'ip_ranges') ?? [];
  enforce(checkVrfIpRanges(ipRanges));
  const existing = [...ctx.store.vrfs.values()].filter((v) => v.projectId === project.id).length;
  enforce(checkVrfQuota({ existing, limit: ctx.store.vrfsPerProject }));
  const localAsn = readLocalAsn(f) ?? 65000;
  const now = ctx.store.nowIso();
  const vrf: Vrf = {
    id: ctx.store.ids.uuid(),
    projectId: project.id,
    metroCode: metro.code,
    createdAt: now,
    name,
    description: optString(f, 'description') ?? '',
    ipRanges,
    localAsn,
    tags: optStringArray(f, 'tags') ?? [],
    bgpDynamicNeighborsEnabled: optBoolean(f, 'bgp_dynamic_neighbors_enabled') ?? false,
    bgpDynamicNeighborsExportRouteMap: optBoolean(f, 'bgp_dynamic_neighbors_export_route_map') ?? false,
    bgpDynamicNeighborsBfdEnabled: optBoolean(f, 'bgp_dynamic_neighbors_bfd_enabled') ?? false,
    updatedAt: now,
  };
  ctx.store.addVrf(vrf);
  return json(201, renderVrf(ctx.store, vrf));
}

function updateVrf(ctx: RouteContext) {
  const vrf = requireVrf(ctx, param(ctx, 'id'));
  const f = bodyFields(ctx.req);
  const ipRanges = optStringArray(f, 'ip_ranges');
  if (ipRanges !== undefined) enforce(checkVrfIpRanges(ipRanges));
  ctx.store.updateVrf(vrf, {
    ipRanges,
    name: optString(f, 'name'),
    description: optString(f, 'description'),
    tags: optStringArray(f, 'tags'),
    localAsn: readLocalAsn(f),
    bgpDynamicNeighborsEnabled: optBoolean(f, 'bgp_dynamic_neighbors_enabled'),
    bgpDynamicNeighborsExportRouteMap: optBoolean(f, 'bgp_dynamic_neighbors_export_route_map'),
    bgpDynamicNeighborsBfdEnabled: optBoolean(f, 'bgp_dynamic_neighbors_bfd_enabled'),
  });
  return json(200, renderVrf(ctx.store, vrf));
}

export const vrfRoutes: readonly RouteDef[] = [
  route('findVrfs', 'GET /projects/{id}/vrfs', (ctx) => {
    const project = requireProject(ctx, param(ctx, 'id'));
    const metro = ctx.req.query.get('metro');
    const metroCode = metro === null ? undefined : (ctx.store.metroByRef(metro)?.code ?? metro.toLowerCase());
    const list = [...ctx.store.vrfs.values()].filter(
      (v) => v.projectId === project.id && (metroCode === undefined || v.metroCode === metroCode),
    );
    return json(200, { vrfs: list.map((v) => renderVrf(ctx.store, v)), meta: singlePageMeta(ctx.req, list.length) });
  }),
  route('createVrf', 'POST /projects/{id}/vrfs', createVrf),
  route('findVrfById', 'GET /vrfs/{id}', (ctx) => json(200, renderVrf(ctx.store, requireVrf(ctx, param(ctx, 'id'))))),
  route('updateVrf', 'PUT /vrfs/{id}', updateVrf),
  route('deleteVrf', 'DELETE /vrfs/{id}', (ctx) => {
    ctx.store.deleteVrf(requireVrf(ctx, param(ctx, 'id')));
    return noContent();
  }),
];
