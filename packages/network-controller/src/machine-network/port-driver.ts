import { MachineNetworkEventReasons, type AssignedVlan, type MachineNetwork, type ObservedPortRecord } from '@metal-l2/api';
import { failed, type StepOutcome, waitFor } from '@metal-l2/kube';
import {
  applyPortCall,
  isMetalHttpError,
  describePortCall,
  judgeMetalError,
  metalBackoffMs,
  observePorts,
  planPortChanges,
  pollVlanBatch,
  resolveDesired,
  type DesiredPort,
  type Device,
  type MetalBackoff,
  type MetalClient,
  type VirtualNetwork,
} from '@metal-l2/metal-api';
import type { MachineNetworkScope, Step } from './scope.js';

/** Includes that make a device read carry what the planner needs: each port's VLANs and native VLAN. */
export const DEVICE_INCLUDES: readonly string[] = ['network_ports.virtual_networks', 'network_ports.native_virtual_network', 'metro'];

export type BatchPoll =
  | { readonly kind: 'none' }
  | { readonly kind: 'pending'; readonly afterMs: number }
  | { readonly kind: 'completed'; readonly final: boolean }
  | { readonly kind: 'failed'; readonly message: string };

/**
 * Looks once at the VLAN batch this controller started, if any, and forgets it when it ended.
 * One read: the device is not read again when the batch was the plan's last call.
 */
export async function pollPendingBatch(scope: MachineNetworkScope, metal: MetalClient): Promise<BatchPoll> {
  const status = (scope.machineNetwork.status ??= {});
  const pending = status.pendingBatch;
  if (pending === undefined) return { kind: 'none' };
  // Reconciles come for many reasons (our own status write, CAPP's updates); a batch is looked at
  // only when the poll interval has passed since it was started or last looked at.
  const interval = scope.ctx.timings.batchPollMs;
  const now = scope.ctx.now().getTime();
  const last = scope.ctx.batchChecks.get(pending.batchID);
  if (last !== undefined && now - last < interval) return { kind: 'pending', afterMs: interval - (now - last) };
  scope.ctx.batchChecks.set(pending.batchID, now);
  const polled = await pollVlanBatch(metal.ports, { portId: pending.portID, batchId: pending.batchID, signal: scope.rctx.signal });
  if (polled.kind !== 'pending') scope.ctx.batchChecks.delete(pending.batchID);
  switch (polled.kind) {
    case 'pending':
      return { kind: 'pending', afterMs: interval };
    case 'completed':
      delete status.pendingBatch;
      return { kind: 'completed', final: pending.final };
    case 'failed':
      delete status.pendingBatch;
      return {
        kind: 'failed',
        message: `VLAN batch ${pending.batchID} on ${pending.port} failed: ${polled.errorMessages.join('; ') || 'no reason given'}`,
      };
  }
}

/** The device's ports as status shows them. */
export function portRecords(device: Pick<Device, 'network_ports'>, vlans: readonly VirtualNetwork[]): ObservedPortRecord[] {
  const observed = observePorts(device.network_ports ?? [], vlans).ports;
  const typeOf = new Map((device.network_ports ?? []).map((p) => [p.id, p.network_type]));
  return observed.map((p) => {
    const networkType = typeOf.get(p.id);
    const vxlans = p.vlans.map((v) => v.vxlan).filter((v): v is number => v !== undefined);
    return {
      id: p.id,
      name: p.name,
      ...(networkType === undefined ? {} : { networkType }),
      bonded: p.bonded,
      ...(vxlans.length === 0 ? {} : { vlans: vxlans }),
      ...(p.nativeVlan?.vxlan === undefined ? {} : { nativeVlan: p.nativeVlan.vxlan }),
    };
  });
}

export type DriveResult =
  | { readonly kind: 'converged'; readonly callCount: number }
  | { readonly kind: 'batch-started'; readonly callCount: number }
  | { readonly kind: 'refused'; readonly message: string };

type BatchCall = {
  readonly portId: string;
  readonly portName: string;
  readonly vlanAssignments: readonly { vlan: { id: string; vxlan: number | undefined }; state: 'assigned' | 'unassigned' }[];
};

/** Adds the VLANs a batch is about to assign to the record; true when the record changed. */
function recordIntent(mn: MachineNetwork, call: BatchCall): boolean {
  const status = (mn.status ??= {});
  const assigned: AssignedVlan[] = [...(status.assignedVlans ?? [])];
  let added = false;
  for (const a of call.vlanAssignments) {
    if (a.state !== 'assigned' || assigned.some((v) => v.portID === call.portId && v.vlanID === a.vlan.id)) continue;
    assigned.push({ portID: call.portId, port: call.portName, vxlan: a.vlan.vxlan ?? 0, vlanID: a.vlan.id });
    added = true;
  }
  status.assignedVlans = assigned;
  return added;
}

/** Drops the VLANs a batch unassigns from the record, once the batch is accepted (or adopted). */
function recordUnassigned(mn: MachineNetwork, call: BatchCall): void {
  const status = (mn.status ??= {});
  const gone = new Set(call.vlanAssignments.filter((a) => a.state === 'unassigned').map((a) => a.vlan.id));
  if (gone.size === 0) return;
  status.assignedVlans = (status.assignedVlans ?? []).filter((v) => !(v.portID === call.portId && gone.has(v.vlanID)));
}

/**
 * Plans the calls from the device as read to `desired`, then sends them in order. A VLAN batch
 * ends the run: it is recorded as pending (with whether it was the plan's last call) and polled by
 * a later reconcile instead of blocking a worker. The VLANs a batch assigns are recorded, and the
 * record written to the API server, before the batch is sent: a process that dies with the batch in
 * flight leaves them known as ours, so a deletion unassigns them. (One extra write per batch; an
 * intent whose batch never ran costs nothing: the deletion finds the VLAN absent.) VLANs a batch
 * unassigns leave the record once the batch is accepted.
 */
export async function drivePorts(
  scope: MachineNetworkScope,
  input: {
    readonly metal: MetalClient;
    readonly device: Device;
    readonly desired: readonly DesiredPort[];
    readonly vlans: readonly VirtualNetwork[];
  },
): Promise<DriveResult> {
  const plan = planPortChanges({ device: input.device, desired: input.desired, virtualNetworks: input.vlans });
  if (plan.kind === 'refused') return { kind: 'refused', message: plan.issues.map((i) => i.message).join('; ') };
  const mn = scope.machineNetwork;
  let callCount = 0;
  for (const [index, call] of plan.calls.entries()) {
    const description = describePortCall(call);
    scope.rctx.logger.info('calling the Metal API for a port', { call: description, device: input.device.id });
    if (call.operation === 'createPortVlanAssignmentBatch' && recordIntent(mn, call)) await scope.checkpoint();
    let started;
    try {
      started = await applyPortCall(input.metal.ports, call, scope.rctx.signal);
    } catch (err: unknown) {
      // A batch this controller started and lost track of (a crash before its status was
      // written) is still open: the API refuses a second one. Adopt it and poll it instead.
      const open =
        call.operation === 'createPortVlanAssignmentBatch' && isMetalHttpError(err) && err.status === 422
          ? await openBatch(input.metal, call.portId, scope.rctx.signal)
          : undefined;
      if (open === undefined) throw err;
      if (call.operation === 'createPortVlanAssignmentBatch') recordUnassigned(mn, call);
      (mn.status ??= {}).pendingBatch = { portID: call.portId, port: call.portName, batchID: open, final: false };
      scope.rctx.logger.info('adopted an open VLAN batch', { port: call.portName, batch: open });
      return { kind: 'batch-started', callCount: callCount + 1 };
    }
    callCount++;
    if (call.operation === 'createPortVlanAssignmentBatch') recordUnassigned(mn, call);
    scope.ctx.events.event(mn, { type: 'Normal', reason: MachineNetworkEventReasons.portCall, message: description });
    if (started.kind === 'batch-created') {
      (mn.status ??= {}).pendingBatch = {
        portID: started.portId,
        port: call.portName,
        batchID: started.batchId,
        final: index === plan.calls.length - 1,
      };
      scope.ctx.batchChecks.set(started.batchId, scope.ctx.now().getTime());
      return { kind: 'batch-started', callCount };
    }
  }
  return { kind: 'converged', callCount };
}

async function openBatch(metal: MetalClient, portId: string, signal: AbortSignal): Promise<string | undefined> {
  const batches = await metal.ports.listVlanAssignmentBatches(portId, { signal });
  return batches.find((b) => b.state === 'queued' || b.state === 'in_progress')?.id;
}

/** The ports as they will be once the plan to `desired` has run: what status shows while it runs. */
export function projectedPorts(input: {
  readonly device: Device;
  readonly desired: readonly DesiredPort[];
  readonly vlans: readonly VirtualNetwork[];
}): ObservedPortRecord[] {
  const observed = observePorts(input.device.network_ports ?? [], input.vlans).ports;
  const { settings } = resolveDesired(input.desired, observed, { virtualNetworks: input.vlans, metro: input.device.metro?.code });
  return observed.map((p) => {
    const s = settings.get(p.name) ?? p;
    const vxlans = s.vlans.map((v) => v.vxlan).filter((v): v is number => v !== undefined);
    return {
      id: p.id,
      name: p.name,
      bonded: s.bonded,
      ...(vxlans.length === 0 ? {} : { vlans: vxlans }),
      ...(s.nativeVlan?.vxlan === undefined ? {} : { nativeVlan: s.nativeVlan.vxlan }),
    };
  });
}

// ---- After a Metal failure: how long the machine's Metal work holds off ----

// The shared Metal error policy (metal-api's retry.ts) applied to one machine: a Retry-After
// is the requeue delay, other failures back off exponentially over the machine's failures in a
// row, and until the wait is over no Metal call is made for the machine, whatever event wakes it
// (a claim or Machine update would otherwise call again at once). Kept in memory: a restart
// starts the streak again, which only makes one retry come sooner. The streak ends when the
// ports converge.

/** One machine's Metal failures in a row and when it may call Metal again. */
export interface MetalStreak {
  readonly failures: number;
  readonly notBeforeMs: number;
}

function streakKey(scope: MachineNetworkScope): string {
  return scope.machineNetwork.metadata.uid ?? `${scope.namespace}/${scope.name}`;
}

function backoffOf(scope: MachineNetworkScope): MetalBackoff {
  return { baseMs: scope.ctx.timings.metalRetryMs, maxMs: scope.ctx.timings.metalRetryMaxMs };
}

function failures(scope: MachineNetworkScope): number {
  return (scope.ctx.metalStreaks.get(streakKey(scope))?.failures ?? 0) + 1;
}

function holdOff(scope: MachineNetworkScope, streak: { failures: number; afterMs: number }): StepOutcome {
  scope.ctx.metalStreaks.set(streakKey(scope), { failures: streak.failures, notBeforeMs: scope.ctx.now().getTime() + streak.afterMs });
  return waitFor(streak.afterMs);
}

/**
 * What to do after a failed Metal call: come back when Metal said (Retry-After) or after the
 * backoff. Errors that are not Metal's (and aborted calls: shutdown, the reconcile's deadline)
 * fail the reconcile, so the queue's own backoff applies. The caller has set the condition.
 */
export function afterMetalError(scope: MachineNetworkScope, what: string, err: unknown): StepOutcome {
  const n = failures(scope);
  const verdict = judgeMetalError(err, { failures: n, backoff: backoffOf(scope) });
  switch (verdict.kind) {
    case 'retry':
      return holdOff(scope, { failures: n, afterMs: verdict.afterMs });
    case 'gone':
      // A 404 where the caller expected the object: as any other failure, with the backoff.
      return holdOff(scope, { failures: n, afterMs: metalBackoffMs(backoffOf(scope), n) });
    case 'aborted':
    case 'other':
      return failed(new Error(what, { cause: err }));
  }
}

/** After a failure Metal reported without an error (a VLAN batch that failed): the backoff. */
export function afterMetalFailure(scope: MachineNetworkScope): StepOutcome {
  const n = failures(scope);
  return holdOff(scope, { failures: n, afterMs: metalBackoffMs(backoffOf(scope), n) });
}

/** The machine's Metal work succeeded: the next failure starts a new streak. */
export function metalSucceeded(scope: MachineNetworkScope): void {
  scope.ctx.metalStreaks.delete(streakKey(scope));
}

/** `step` (one that calls Metal), unless the machine is still waiting out a Metal failure. */
export function afterMetalWait(step: Step): Step {
  return async (scope) => {
    const notBefore = scope.ctx.metalStreaks.get(streakKey(scope))?.notBeforeMs ?? 0;
    const leftMs = notBefore - scope.ctx.now().getTime();
    return leftMs > 0 ? waitFor(leftMs) : step(scope);
  };
}
