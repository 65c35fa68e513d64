import { param, requirePort } from '../access.js';
import { notFound, unprocessable } from '../errors.js';
import { json, route, type RouteContext, type RouteDef, type SimResponse } from '../http.js';
import { bodyFields, optBoolean, optList, optString, queryBoolean, queryList, reqString } from '../input.js';
import {
  assignVlan,
  bondPort,
  clearNativeVlan,
  convertLayer2,
  convertLayer3,
  createBatch,
  disbondPort,
  resolveVlanRef,
  setNativeVlan,
  unassignVlan,
  type BatchItemInput,
} from '../port-actions.js';
import { readAddressRequests } from '../address-requests.js';
import { renderBatch, renderPortAssignments } from '../render/batch.js';
import { renderPort } from '../render/port.js';

function portAnswer(ctx: RouteContext, portId: string): SimResponse {
  const { port } = requirePort(ctx, portId);
  return json(200, renderPort(ctx.store, port, queryList(ctx.req.query, 'include')));
}

/** Runs a port action on the path's port and answers with the port as it is afterwards. */
function portAction(action: (ctx: RouteContext, target: ReturnType<typeof requirePort>) => void): (ctx: RouteContext) => SimResponse {
  return (ctx) => {
    const target = requirePort(ctx, param(ctx, 'id'));
    action(ctx, target);
    return portAnswer(ctx, target.port.id);
  };
}

function readBatchItems(ctx: RouteContext): BatchItemInput[] {
  const list = optList(bodyFields(ctx.req), 'vlan_assignments');
  if (list === undefined) throw unprocessable('vlan_assignments is required');
  return list.map((f) => {
    const state = optString(f, 'state') ?? 'assigned';
    if (state !== 'assigned' && state !== 'unassigned') throw unprocessable('vlan_assignments[].state must be assigned or unassigned');
    return { vlan: reqString(f, 'vlan'), state, native: optBoolean(f, 'native') ?? false };
  });
}

export const portRoutes: readonly RouteDef[] = [
  route('findPortById', 'GET /ports/{id}', (ctx) => portAnswer(ctx, param(ctx, 'id'))),
  route(
    'assignPort',
    'POST /ports/{id}/assign',
    portAction((ctx, { port, device }) =>
      assignVlan(ctx.store, port, resolveVlanRef(ctx.store, device, reqString(bodyFields(ctx.req), 'vnid'))),
    ),
  ),
  route(
    'unassignPort',
    'POST /ports/{id}/unassign',
    portAction((ctx, { port, device }) =>
      unassignVlan(ctx.store, port, resolveVlanRef(ctx.store, device, reqString(bodyFields(ctx.req), 'vnid'))),
    ),
  ),
  route(
    'bondPort',
    'POST /ports/{id}/bond',
    portAction((ctx, { port }) => bondPort(ctx.store, port, queryBoolean(ctx.req.query, 'bulk_enable') ?? false)),
  ),
  route(
    'disbondPort',
    'POST /ports/{id}/disbond',
    portAction((ctx, { port }) => disbondPort(ctx.store, port, queryBoolean(ctx.req.query, 'bulk_disable') ?? false)),
  ),
  route(
    'convertLayer2',
    'POST /ports/{id}/convert/layer-2',
    portAction((ctx, { port }) => convertLayer2(ctx.store, port, optString(bodyFields(ctx.req), 'vnid'))),
  ),
  route(
    'convertLayer3',
    'POST /ports/{id}/convert/layer-3',
    portAction((ctx, { port }) => {
      convertLayer3(ctx.store, port, readAddressRequests(optList(bodyFields(ctx.req), 'request_ips'), { requirePrivate: false }));
    }),
  ),
  route(
    'assignNativeVlan',
    'POST /ports/{id}/native-vlan',
    portAction((ctx, { port, device }) => {
      const vnid = ctx.req.query.get('vnid');
      if (vnid === null || vnid === '') throw unprocessable('vnid is required');
      setNativeVlan(ctx.store, port, resolveVlanRef(ctx.store, device, vnid));
    }),
  ),
  route(
    'deleteNativeVlan',
    'DELETE /ports/{id}/native-vlan',
    portAction((ctx, { port }) => clearNativeVlan(ctx.store, port)),
  ),
  route('findPortVlanAssignments', 'GET /ports/{id}/vlan-assignments', (ctx) => {
    const { port } = requirePort(ctx, param(ctx, 'id'));
    return json(200, { vlan_assignments: renderPortAssignments(ctx.store, port) });
  }),
  route('findPortVlanAssignmentByPortIdAndAssignmentId', 'GET /ports/{id}/vlan-assignments/{assignment_id}', (ctx) => {
    const { port } = requirePort(ctx, param(ctx, 'id'));
    const found = renderPortAssignments(ctx.store, port).find((a) => a.id === param(ctx, 'assignment_id'));
    if (found === undefined) throw notFound();
    return json(200, found);
  }),
  route('findPortVlanAssignmentBatches', 'GET /ports/{id}/vlan-assignments/batches', (ctx) => {
    const { port } = requirePort(ctx, param(ctx, 'id'));
    const batches = [...ctx.store.batches.values()].filter((b) => b.portId === port.id);
    return json(200, { batches: batches.map((b) => renderBatch(ctx.store, b, new Set())) });
  }),
  route('createPortVlanAssignmentBatch', 'POST /ports/{id}/vlan-assignments/batches', (ctx) => {
    const { port } = requirePort(ctx, param(ctx, 'id'));
    const batch = createBatch(ctx.store, port, {
      inputs: readBatchItems(ctx),
      injected: () => ctx.faults.batchFailure({ operationId: ctx.route.operationId, method: ctx.req.method, path: ctx.req.path }),
    });
    return json(201, renderBatch(ctx.store, batch, queryList(ctx.req.query, 'include')));
  }),
  route('findPortVlanAssignmentBatchByPortIdAndBatchId', 'GET /ports/{id}/vlan-assignments/batches/{batch_id}', (ctx) => {
    const { port } = requirePort(ctx, param(ctx, 'id'));
    const batch = ctx.store.batches.get(param(ctx, 'batch_id'));
    if (batch === undefined || batch.portId !== port.id) throw notFound();
    return json(200, renderBatch(ctx.store, batch, queryList(ctx.req.query, 'include')));
  }),
];
