import { param, requireProject, requireVlan } from '../access.js';
import { enforce, unprocessable } from '../errors.js';
import { json, noContent, route, type RouteContext, type RouteDef } from '../http.js';
import { bodyFields, optInteger, optString, optStringArray } from '../input.js';
import type { VirtualNetwork } from '../models.js';
import { renderVirtualNetwork } from '../render/virtual-network.js';
import { checkVlanDeletable } from '../rules/vlan-in-use.js';
import { checkVxlanRange } from '../rules/vxlan-range.js';
import { checkVxlanUnique } from '../rules/vxlan-unique.js';

/** Spec: without a vxlan "the next-available VLAN ID in the range 1000-1999 will be automatically selected". */
function nextFreeVxlan(taken: ReadonlySet<number>): number {
  for (let v = 1000; v <= 1999; v++) if (!taken.has(v)) return v;
  throw unprocessable('no free VLAN ID left in 1000-1999 for this project and metro');
}

function createVirtualNetwork(ctx: RouteContext) {
  const project = requireProject(ctx, param(ctx, 'id'));
  const f = bodyFields(ctx.req);
  const metroRef = optString(f, 'metro');
  if (metroRef === undefined) {
    throw unprocessable(f['facility'] === undefined ? 'metro is required' : 'facility VLANs are deprecated; give a metro');
  }
  const metro = ctx.store.metroByRef(metroRef);
  if (metro === undefined) throw unprocessable(`metro ${metroRef} not found`);
  const existing = [...ctx.store.vlans.values()]
    .filter((v) => v.projectId === project.id)
    .map((v) => ({ vxlan: v.vxlan, metro: v.metroCode }));
  const requested = optInteger(f, 'vxlan');
  if (requested !== undefined) {
    enforce(checkVxlanRange(requested));
    enforce(checkVxlanUnique({ vxlan: requested, metro: metro.code, existing }));
  }
  const vxlan = requested ?? nextFreeVxlan(new Set(existing.filter((e) => e.metro === metro.code).map((e) => e.vxlan)));
  const vlan: VirtualNetwork = {
    id: ctx.store.ids.uuid(),
    projectId: project.id,
    vxlan,
    metroCode: metro.code,
    createdAt: ctx.store.nowIso(),
    description: optString(f, 'description') ?? '',
    tags: optStringArray(f, 'tags') ?? [],
  };
  ctx.store.addVirtualNetwork(vlan);
  return json(201, renderVirtualNetwork(ctx.store, vlan));
}

export const virtualNetworkRoutes: readonly RouteDef[] = [
  route('findVirtualNetworks', 'GET /projects/{id}/virtual-networks', (ctx) => {
    const project = requireProject(ctx, param(ctx, 'id'));
    const metro = ctx.req.query.get('metro');
    const metroCode = metro === null ? undefined : (ctx.store.metroByRef(metro)?.code ?? metro.toLowerCase());
    const list = [...ctx.store.vlans.values()].filter(
      (v) => v.projectId === project.id && (metroCode === undefined || v.metroCode === metroCode),
    );
    return json(200, { virtual_networks: list.map((v) => renderVirtualNetwork(ctx.store, v)) });
  }),
  route('createVirtualNetwork', 'POST /projects/{id}/virtual-networks', createVirtualNetwork),
  route('getVirtualNetwork', 'GET /virtual-networks/{id}', (ctx) =>
    json(200, renderVirtualNetwork(ctx.store, requireVlan(ctx, param(ctx, 'id')))),
  ),
  route('updateVirtualNetwork', 'PUT /virtual-networks/{id}', (ctx) => {
    const vlan = requireVlan(ctx, param(ctx, 'id'));
    const f = bodyFields(ctx.req);
    ctx.store.updateVirtualNetwork(vlan, { description: optString(f, 'description'), tags: optStringArray(f, 'tags') });
    return json(200, renderVirtualNetwork(ctx.store, vlan));
  }),
  route('deleteVirtualNetwork', 'DELETE /virtual-networks/{id}', (ctx) => {
    const vlan = requireVlan(ctx, param(ctx, 'id'));
    enforce(
      checkVlanDeletable({
        vxlan: vlan.vxlan,
        assignedPorts: ctx.store.portsWithVlan(vlan.id).map((p) => `${ctx.store.deviceOfPort(p).hostname}/${p.name}`),
        metalGatewayIds: ctx.store.gatewaysOfVlan(vlan.id).map((g) => g.id),
        openBatchIds: ctx.store.openBatches({ vlanId: vlan.id }).map((b) => b.id),
      }),
    );
    ctx.store.deleteVirtualNetwork(vlan);
    return noContent();
  }),
];
