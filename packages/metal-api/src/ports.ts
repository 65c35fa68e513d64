// Ports: everything that changes a machine's network mode. Bond ports (bond0) convert between
// layer 3 and layer 2 and bond or disbond their members; any port takes VLANs, one at a time
// (assign/unassign) or as an asynchronous batch that is polled to completion.
//
// The actions here are retried after 5xx and timeouts although they are POSTs: repeating one ends
// in the same port state or in a 422 ("already assigned"), after which the caller re-reads the
// port and plans again, so no duplicate object can come of it. Creating a batch is the exception:
// it makes a new batch object each time.

import { itemsOf, objectWithId } from './decode.js';
import { includeQuery, signalOf } from './transport.js';
import type { CallOptions, IncludeOptions } from './transport.js';
import { apiPath } from './transport.js';
import type { MetalTransport } from './transport.js';
import type {
  Port,
  PortConvertLayer3RequestIp,
  PortVlanAssignment,
  PortVlanAssignmentBatch,
  PortVlanAssignmentBatchCreateInput,
} from './types.js';
import type { PortCall } from './port-plan/plan.js';

export const PORT_OPERATIONS = {
  get: 'findPortById',
  assign: 'assignPort',
  unassign: 'unassignPort',
  createVlanAssignmentBatch: 'createPortVlanAssignmentBatch',
  getVlanAssignmentBatch: 'findPortVlanAssignmentBatchByPortIdAndBatchId',
  listVlanAssignmentBatches: 'findPortVlanAssignmentBatches',
  listVlanAssignments: 'findPortVlanAssignments',
  assignNativeVlan: 'assignNativeVlan',
  deleteNativeVlan: 'deleteNativeVlan',
  bond: 'bondPort',
  disbond: 'disbondPort',
  convertLayer2: 'convertLayer2',
  convertLayer3: 'convertLayer3',
} as const;

/** Ask for these when reading a port, or VLANs come back as bare `{href}` links. */
export const PORT_VLAN_INCLUDES: readonly string[] = ['virtual_networks', 'native_virtual_network'];

/**
 * The addresses a port gets back when it returns to layer 3: public IPv4, private IPv4 (the API
 * requires it) and public IPv6, as a freshly provisioned server has.
 */
export const DEFAULT_LAYER3_REQUEST_IPS: readonly PortConvertLayer3RequestIp[] = [
  { address_family: 4, public: true },
  { address_family: 4, public: false },
  { address_family: 6, public: true },
];

export interface BondOptions extends IncludeOptions {
  /** Bond every member of the bond (`bulk_enable=true`), not only this port. */
  bulk?: boolean;
}

export interface ConvertLayer3Options extends IncludeOptions {
  requestIps?: readonly PortConvertLayer3RequestIp[];
}

export interface ConvertLayer2Options extends IncludeOptions {
  /** Optionally assign this VLAN (UUID or number) as part of the conversion. */
  vnid?: string;
}

export interface PortsApi {
  /** `GET /ports/{id}` (findPortById); pass `include: PORT_VLAN_INCLUDES` for VLAN details. */
  get(id: string, options?: IncludeOptions): Promise<Port>;
  /** `POST /ports/{id}/assign` (assignPort); `vnid` is a VLAN UUID or number. */
  assign(id: string, vnid: string, options?: IncludeOptions): Promise<Port>;
  /** `POST /ports/{id}/unassign` (unassignPort). */
  unassign(id: string, vnid: string, options?: IncludeOptions): Promise<Port>;
  /** `POST /ports/{id}/vlan-assignments/batches` (createPortVlanAssignmentBatch); poll the result. */
  createVlanAssignmentBatch(
    id: string,
    input: PortVlanAssignmentBatchCreateInput,
    options?: IncludeOptions,
  ): Promise<PortVlanAssignmentBatch>;
  /** `GET /ports/{id}/vlan-assignments/batches/{batch_id}`. */
  getVlanAssignmentBatch(id: string, batchId: string, options?: IncludeOptions): Promise<PortVlanAssignmentBatch>;
  /** `GET /ports/{id}/vlan-assignments/batches` (findPortVlanAssignmentBatches; not paginated). */
  listVlanAssignmentBatches(id: string, options?: CallOptions): Promise<PortVlanAssignmentBatch[]>;
  /** `GET /ports/{id}/vlan-assignments` (findPortVlanAssignments; not paginated). */
  listVlanAssignments(id: string, options?: CallOptions): Promise<PortVlanAssignment[]>;
  /** `POST /ports/{id}/native-vlan?vnid=` (assignNativeVlan); the VLAN must already be assigned. */
  assignNativeVlan(id: string, vnid: string, options?: IncludeOptions): Promise<Port>;
  /** `DELETE /ports/{id}/native-vlan` (deleteNativeVlan). */
  deleteNativeVlan(id: string, options?: IncludeOptions): Promise<Port>;
  /** `POST /ports/{id}/bond` (bondPort). */
  bond(id: string, options?: BondOptions): Promise<Port>;
  /** `POST /ports/{id}/disbond` (disbondPort); `bulk` sends `bulk_disable=true`. */
  disbond(id: string, options?: BondOptions): Promise<Port>;
  /** `POST /ports/{id}/convert/layer-2` (convertLayer2): the bond port loses its IP assignments. */
  convertLayer2(id: string, options?: ConvertLayer2Options): Promise<Port>;
  /** `POST /ports/{id}/convert/layer-3` (convertLayer3): VLANs must be unassigned first. */
  convertLayer3(id: string, options?: ConvertLayer3Options): Promise<Port>;
}

const port = objectWithId<Port>('port');
const batch = objectWithId<PortVlanAssignmentBatch>('VLAN assignment batch');

/** A POST on a port that answers with the port. */
interface PortAction {
  operation: string;
  path: string;
  options: IncludeOptions | undefined;
  query?: Record<string, string | boolean | undefined>;
  body?: unknown;
}

export function createPortsApi(transport: MetalTransport): PortsApi {
  const action = (a: PortAction): Promise<Port> =>
    transport.send({
      operation: a.operation,
      method: 'POST',
      path: a.path,
      query: { ...includeQuery(a.options), ...a.query },
      ...(a.body === undefined ? {} : { body: a.body }),
      decode: port,
      isIdempotent: true,
      ...signalOf(a.options),
    });

  return {
    get: (id, options) =>
      transport.send({
        operation: PORT_OPERATIONS.get,
        method: 'GET',
        path: apiPath`/ports/${id}`,
        query: includeQuery(options),
        decode: port,
        ...signalOf(options),
      }),

    assign: (id, vnid, options) =>
      action({ operation: PORT_OPERATIONS.assign, path: apiPath`/ports/${id}/assign`, options, body: { vnid } }),

    unassign: (id, vnid, options) =>
      action({ operation: PORT_OPERATIONS.unassign, path: apiPath`/ports/${id}/unassign`, options, body: { vnid } }),

    createVlanAssignmentBatch: (id, input, options) =>
      transport.send({
        operation: PORT_OPERATIONS.createVlanAssignmentBatch,
        method: 'POST',
        path: apiPath`/ports/${id}/vlan-assignments/batches`,
        query: includeQuery(options),
        body: input,
        decode: batch,
        ...signalOf(options),
      }),

    getVlanAssignmentBatch: (id, batchId, options) =>
      transport.send({
        operation: PORT_OPERATIONS.getVlanAssignmentBatch,
        method: 'GET',
        path: apiPath`/ports/${id}/vlan-assignments/batches/${batchId}`,
        query: includeQuery(options),
        decode: batch,
        ...signalOf(options),
      }),

    listVlanAssignmentBatches: (id, options) =>
      transport.send({
        operation: PORT_OPERATIONS.listVlanAssignmentBatches,
        method: 'GET',
        path: apiPath`/ports/${id}/vlan-assignments/batches`,
        decode: itemsOf<PortVlanAssignmentBatch>('batches', 'VLAN assignment batch list'),
        ...signalOf(options),
      }),

    listVlanAssignments: (id, options) =>
      transport.send({
        operation: PORT_OPERATIONS.listVlanAssignments,
        method: 'GET',
        path: apiPath`/ports/${id}/vlan-assignments`,
        decode: itemsOf<PortVlanAssignment>('vlan_assignments', 'VLAN assignment list'),
        ...signalOf(options),
      }),

    assignNativeVlan: (id, vnid, options) =>
      action({ operation: PORT_OPERATIONS.assignNativeVlan, path: apiPath`/ports/${id}/native-vlan`, options, query: { vnid } }),

    deleteNativeVlan: (id, options) =>
      transport.send({
        operation: PORT_OPERATIONS.deleteNativeVlan,
        method: 'DELETE',
        path: apiPath`/ports/${id}/native-vlan`,
        query: includeQuery(options),
        decode: port,
        ...signalOf(options),
      }),

    bond: (id, options) =>
      action({ operation: PORT_OPERATIONS.bond, path: apiPath`/ports/${id}/bond`, options, query: { bulk_enable: options?.bulk } }),

    disbond: (id, options) =>
      action({ operation: PORT_OPERATIONS.disbond, path: apiPath`/ports/${id}/disbond`, options, query: { bulk_disable: options?.bulk } }),

    // The spec gives convert/layer-2 the PortAssignInput body; an empty object is what the
    // Terraform provider sends when no VLAN goes with the conversion.
    convertLayer2: (id, options) =>
      action({
        operation: PORT_OPERATIONS.convertLayer2,
        path: apiPath`/ports/${id}/convert/layer-2`,
        options,
        body: options?.vnid === undefined ? {} : { vnid: options.vnid },
      }),

    convertLayer3: (id, options) =>
      action({
        operation: PORT_OPERATIONS.convertLayer3,
        path: apiPath`/ports/${id}/convert/layer-3`,
        options,
        body: { request_ips: options?.requestIps ?? DEFAULT_LAYER3_REQUEST_IPS },
      }),
  };
}

// ---- Running a port plan through the client ----
//
// Runs a port plan through the client: one planned call at a time, in order, VLAN batches polled
// to completion before the next call (the API allows one open batch per port, and later steps
// depend on the VLANs being gone or there). Expected outcomes (a batch that failed or is still
// running) are values; transport failures throw the client's MetalApiError.
//
// A controller that cannot block a worker this long uses applyPortCall and pollVlanBatch itself
// and requeues between polls.

/** What one planned call left behind. */
export type PortCallStarted = { kind: 'done' } | { kind: 'batch-created'; portId: string; batchId: string };

/** Where a VLAN batch stands. */
export type VlanBatchStatus =
  | { kind: 'completed'; batch: PortVlanAssignmentBatch }
  | { kind: 'failed'; batch: PortVlanAssignmentBatch; errorMessages: readonly string[] }
  | { kind: 'pending'; batch: PortVlanAssignmentBatch };

export type PortPlanOutcome =
  | { kind: 'applied'; callCount: number }
  | { kind: 'batch-failed'; call: PortCall; batchId: string; errorMessages: readonly string[] }
  | { kind: 'batch-pending'; call: PortCall; batchId: string };

export interface ApplyPortPlanOptions {
  /** Waits between batch polls; the client's TimeSource.sleep in production, a fake in tests. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Default 1000 ms: batches take seconds. */
  pollIntervalMs?: number;
  /** Polls per batch before giving up with `batch-pending`; default 120. */
  maxPolls?: number;
  signal?: AbortSignal;
  /** Called before each call is sent (logs, events). */
  onCall?: (call: PortCall) => void;
}

/** Sends one planned call. */
export async function applyPortCall(ports: PortsApi, call: PortCall, signal?: AbortSignal): Promise<PortCallStarted> {
  const options = signal === undefined ? {} : { signal };
  switch (call.operation) {
    case 'createPortVlanAssignmentBatch': {
      const batch = await ports.createVlanAssignmentBatch(
        call.portId,
        { vlan_assignments: call.vlanAssignments.map((a) => ({ vlan: a.vlan.id, state: a.state })) },
        options,
      );
      // decode guarantees the id.
      return { kind: 'batch-created', portId: call.portId, batchId: batch.id ?? '' };
    }
    case 'deleteNativeVlan':
      await ports.deleteNativeVlan(call.portId, options);
      return { kind: 'done' };
    case 'assignNativeVlan':
      await ports.assignNativeVlan(call.portId, call.vlan.id, options);
      return { kind: 'done' };
    case 'disbondPort':
      await ports.disbond(call.portId, { ...options, bulk: call.bulk });
      return { kind: 'done' };
    case 'bondPort':
      await ports.bond(call.portId, { ...options, bulk: call.bulk });
      return { kind: 'done' };
    case 'convertLayer2':
      await ports.convertLayer2(call.portId, options);
      return { kind: 'done' };
    case 'convertLayer3':
      await ports.convertLayer3(call.portId, { ...options, requestIps: call.requestIps });
      return { kind: 'done' };
  }
}

/** Reads a batch once. */
export async function pollVlanBatch(
  ports: PortsApi,
  at: { portId: string; batchId: string; signal?: AbortSignal },
): Promise<VlanBatchStatus> {
  const batch = await ports.getVlanAssignmentBatch(at.portId, at.batchId, at.signal === undefined ? {} : { signal: at.signal });
  // Metal omits the state while a batch is being queued.
  const state = batch.state ?? 'queued';
  switch (state) {
    case 'completed':
      return { kind: 'completed', batch };
    case 'failed':
      return { kind: 'failed', batch, errorMessages: batch.error_messages ?? [] };
    case 'queued':
    case 'in_progress':
      return { kind: 'pending', batch };
  }
}

/** Runs every call in order, waiting for each batch; stops at the first batch that fails or stalls. */
export async function applyPortPlan(ports: PortsApi, calls: readonly PortCall[], options: ApplyPortPlanOptions): Promise<PortPlanOutcome> {
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const maxPolls = options.maxPolls ?? 120;
  for (const call of calls) {
    options.onCall?.(call);
    const started = await applyPortCall(ports, call, options.signal);
    if (started.kind === 'done') continue;
    const at = { portId: started.portId, batchId: started.batchId, ...(options.signal === undefined ? {} : { signal: options.signal }) };
    let status: VlanBatchStatus | undefined;
    for (let poll = 0; poll < maxPolls; poll += 1) {
      await options.sleep(pollIntervalMs, options.signal);
      status = await pollVlanBatch(ports, at);
      if (status.kind !== 'pending') break;
    }
    if (status?.kind === 'failed') {
      return { kind: 'batch-failed', call, batchId: started.batchId, errorMessages: status.errorMessages };
    }
    if (status?.kind !== 'completed') return { kind: 'batch-pending', call, batchId: started.batchId };
  }
  return { kind: 'applied', callCount: calls.length };
}
