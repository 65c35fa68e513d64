import { PoolEventReasons, PoolReasons, type IPPool, type PoolVrfStatus, type VrfResourceKind, type VrfSpec } from '@metal-l2/api';
import type { MetalClient, VirtualNetwork, Vrf, VrfIpReservation } from '@metal-l2/metal-api';
import type { IpamContext } from '../context.js';
import { poolIndexKey, type PoolRef } from '../pool-ref.js';
import { isVrfMetalError, metalCall } from './metal-call.js';
import type { Owner } from './ownership.js';
import { recordVrfStatus } from './record-status.js';
import type { PoolSubnet } from './subnet.js';
import { withResource, withoutResource } from './vrf-status.js';

/** Something the pool's Metal side did that people should see as a Kubernetes Event. */
export interface VrfEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** Why a VRF pass stopped short of ready: the VRFReady reason. */
export type VrfBlockReason =
  | typeof PoolReasons.invalidSpec
  | typeof PoolReasons.vrfCredentialsMissing
  | typeof PoolReasons.vrfError
  | typeof PoolReasons.vrfNotFound
  | typeof PoolReasons.vrfConflict
  | typeof PoolReasons.vrfSubnetOutside
  | typeof PoolReasons.vrfDrift
  | typeof PoolReasons.vrfProvisioning
  | typeof PoolReasons.deleting;

/**
 * What a step asks for next: go on to the next step, or stop here (the pool is not ready) with a
 * reason and a message, coming back after `requeueAfterMs` or, when absent, after the retry delay.
 */
export type StepOutcome =
  | { readonly kind: 'continue' }
  | { readonly kind: 'blocked'; readonly reason: VrfBlockReason; readonly message: string; readonly requeueAfterMs?: number };

export const proceed: StepOutcome = { kind: 'continue' };

export function blocked(reason: VrfBlockReason, message: string, requeueAfterMs?: number): StepOutcome {
  return requeueAfterMs === undefined ? { kind: 'blocked', reason, message } : { kind: 'blocked', reason, message, requeueAfterMs };
}

/** Everything one pass over a pool's Metal side reads and carries between steps. */
export interface VrfScope {
  readonly ctx: IpamContext;
  readonly ref: PoolRef;
  readonly spec: VrfSpec;
  readonly subnet: PoolSubnet;
  readonly metal: MetalClient;
  /** The pool and management cluster that everything this pool creates is tagged with (ownership.ts). */
  readonly owner: Owner;
  /** Addresses status holds for claims (released ones in grace too): the gateway must not take one. */
  readonly allocated: ReadonlySet<string>;
  /** The pool as last written: each status write is guarded by its resourceVersion. */
  pool: IPPool;
  /** What Metal showed during this pass. */
  readonly observed: { vrf?: Vrf; vlan?: VirtualNetwork; reservation?: VrfIpReservation };
  /** Created during this pass: nothing can hang below them yet, so their lists are not read. */
  readonly createdNow: Set<VrfResourceKind>;
  readonly events: VrfEvent[];
}

export function vrfStatusOf(scope: VrfScope): PoolVrfStatus {
  return scope.pool.status?.vrf ?? {};
}

/** Writes a change of status.vrf at once (see recordVrfStatus) and keeps the written pool. */
export async function record(scope: VrfScope, change: (current: PoolVrfStatus) => PoolVrfStatus): Promise<void> {
  scope.pool = await recordVrfStatus(scope.ctx, { ref: scope.ref, pool: scope.pool, change });
}

/**
 * A resource the pool recorded is gone from Metal (deleted by hand). It is forgotten, with what
 * went along with it, and the pass stops with DriftDetected; the next pass, at once, recreates
 * what the pool may create. Stopping makes the drift visible as a condition, not only an Event.
 */
export async function driftDetected(scope: VrfScope, kind: VrfResourceKind, message: string): Promise<StepOutcome> {
  await record(scope, (status) => withoutResource(status, kind, { withDependents: true }));
  scope.events.push({ type: 'Warning', reason: PoolEventReasons.driftDetected, message });
  return blocked(PoolReasons.vrfDrift, message, 0);
}

function describeKind(kind: VrfResourceKind): string {
  return kind === 'MetalGateway' ? 'Metal Gateway' : kind === 'Reservation' ? 'reservation' : kind;
}

/**
 * Says to wait when an earlier create of `kind` for this pool failed without telling whether
 * Metal acted, and its settle time has not passed: the steps look for the object first, and
 * only create once that time is over. Undefined when a create may go.
 */
function settling(scope: VrfScope, kind: VrfResourceKind): StepOutcome | undefined {
  const waitMs = scope.ctx.vrf.memory.settlingMs(poolIndexKey(scope.ref), kind, scope.ctx.now().getTime());
  if (waitMs === undefined) return undefined;
  return blocked(
    PoolReasons.vrfProvisioning,
    `an earlier create of the ${describeKind(kind)} may still reach Metal; looking for it again in ${Math.ceil(waitMs / 1000)} s before creating another`,
    waitMs,
  );
}

/**
 * The tail every ensure step shares once it decided to create: wait while an earlier create of
 * the kind may still land (settling); the create call (when it fails so that Metal may have
 * acted, the next create of the kind waits); then the id, with the step's details, written into
 * status.vrf at once, and an Event telling what was created. Returns the created object, or the
 * outcome to stop the pass with while settling.
 */
export async function createRecorded<T extends { readonly id?: string | undefined }>(
  scope: VrfScope,
  input: {
    readonly kind: VrfResourceKind;
    readonly what: string;
    readonly call: () => Promise<T>;
    /** Status fields recorded beside the id (the vxlan, the subnet, the gateway's address). */
    readonly details?: (created: T) => Partial<PoolVrfStatus>;
    /** What the Event says was created, after "created ". */
    readonly note: (created: T, id: string) => string;
    /** A write that must precede the call (see ensureMetalGateway), skipped while settling. */
    readonly beforeCreate?: () => Promise<void>;
  },
): Promise<{ readonly kind: 'created'; readonly value: T } | { readonly kind: 'settling'; readonly outcome: StepOutcome }> {
  const wait = settling(scope, input.kind);
  if (wait !== undefined) return { kind: 'settling', outcome: wait };
  await input.beforeCreate?.();
  let created: T;
  try {
    created = await metalCall(input.what, input.call);
  } catch (err: unknown) {
    if (isVrfMetalError(err) && err.mayHaveActed) {
      scope.ctx.vrf.memory.settle(poolIndexKey(scope.ref), input.kind, scope.ctx.now().getTime() + scope.ctx.vrf.settleMs);
    }
    throw err;
  }
  const id = created.id ?? '';
  const details = input.details?.(created);
  scope.createdNow.add(input.kind);
  await record(scope, (status) => withResource(status, input.kind, { id, created: true, ...(details === undefined ? {} : { details }) }));
  scope.events.push({ type: 'Normal', reason: PoolEventReasons.metalResourceCreated, message: `created ${input.note(created, id)}` });
  return { kind: 'created', value: created };
}
