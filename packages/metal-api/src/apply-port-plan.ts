// Runs a port plan through the client: one planned call at a time, in order, VLAN batches polled
// to completion before the next call (the API allows one open batch per port, and later steps
// depend on the VLANs being gone or there). Expected outcomes (a batch that failed or is still
// running) are values; transport failures throw the client's MetalApiError.
//
// A controller that cannot block a worker this long uses applyPortCall and pollVlanBatch itself
// and requeues between polls.

import type { PortCall } from './port-plan/plan.js';
import type { PortsApi } from './ports.js';
import type { PortVlanAssignmentBatch } from './types.js';

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
