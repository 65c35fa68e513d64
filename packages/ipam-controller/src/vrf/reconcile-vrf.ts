import { PoolReasons, type IPPool, type PoolVrfStatus } from '@metal-l2/api';
import type { ResolvedPool } from '@metal-l2/ipam-core';
import type { ConditionInput } from '@metal-l2/kube';
import { MetalClients } from '@metal-l2/metal-api';
import type { IpamContext } from '../context.js';
import { formatPoolRef, poolIndexKey, poolObjectKey, poolTypeOf, type PoolRef } from '../pool-ref.js';
import { readCredentials } from './credentials.js';
import { ensureMetalGateway } from './ensure-metal-gateway.js';
import { ensureReservation } from './ensure-reservation.js';
import { checkSubnetInVrf, ensureVrf } from './ensure-vrf.js';
import { ensureVlan } from './ensure-vlan.js';
import { isVrfMetalError } from './metal-call.js';
import { isSubnetInRanges, poolSubnet, reservationSizeProblem } from './subnet.js';
import { retryDelayMs } from './vrf-runtime.js';
import { blocked, type StepOutcome, type VrfEvent, type VrfScope } from './vrf-scope.js';
import { describeReady, reservedAddressesOf, vrfReadyCondition } from './vrf-status.js';

/** What one pass over a pool's Metal side found; the pool reconciler folds it into its status write. */
export interface VrfOutcome {
  /** The pool as last written (ids are recorded as soon as Metal hands them out). */
  readonly pool: IPPool;
  /** status.vrf as this pass found or left it (already written: the steps record as they go). */
  readonly status: PoolVrfStatus;
  readonly ready: boolean;
  /** VRFReady. */
  readonly condition: ConditionInput;
  /** Addresses never to allocate: the Metal Gateway's. */
  readonly reservedAddresses: readonly string[];
  /** When to look again: the retry delay when not ready, the resync period when ready. */
  readonly requeueAfterMs: number | undefined;
  readonly events: readonly VrfEvent[];
}

export interface ReconcileVrfInput {
  readonly ref: PoolRef;
  /** A pool with spec.vrf, not being deleted. */
  readonly pool: IPPool;
  /** undefined when the pool spec is invalid. */
  readonly resolved: ResolvedPool | undefined;
  /** Addresses status holds (released ones in grace too). */
  readonly allocated: ReadonlySet<string>;
}

/** The steps, in order; the runner stops at the first that does not continue. */
const steps: readonly ((scope: VrfScope) => Promise<StepOutcome> | StepOutcome)[] = [
  ensureVrf,
  checkSubnetInVrf,
  ensureVlan,
  ensureReservation,
  ensureMetalGateway,
];

/**
 * Brings a pool's Metal side to match spec.vrf: VRF (adopted or created), VLAN, the subnet
 * reserved in the VRF, the Metal Gateway. Every step reads what exists before it writes, so a
 * pass can be repeated (after a crash, a lost race, a 5xx) without creating anything twice.
 * A pool verified recently (or failed, until its retry time), whose spec did not change since, is
 * answered from memory without any call: the pool reconciler runs on every claim event.
 */
export async function reconcileVrf(ctx: IpamContext, input: ReconcileVrfInput): Promise<VrfOutcome> {
  const { ref, resolved } = input;
  const spec = input.pool.spec.vrf;
  const key = poolIndexKey(ref);
  const runtime = ctx.vrf;
  const notReady = (why: { reason: string; message: string; requeueAfterMs?: number; scope?: VrfScope }): VrfOutcome => {
    const pool = why.scope?.pool ?? input.pool;
    return {
      pool,
      status: pool.status?.vrf ?? {},
      ready: false,
      condition: vrfReadyCondition({ ready: false, reason: why.reason, message: why.message }),
      reservedAddresses: reservedAddressesOf(pool.status?.vrf),
      requeueAfterMs: why.requeueAfterMs,
      events: why.scope?.events ?? [],
    };
  };
  if (spec === undefined) throw new Error('internal: reconcileVrf called for a pool without spec.vrf');
  if (resolved === undefined) return notReady({ reason: PoolReasons.invalidSpec, message: 'the pool spec is invalid (see Ready)' });
  const subnet = poolSubnet(resolved);
  const sizeProblem = reservationSizeProblem(subnet);
  if (sizeProblem !== undefined) return notReady({ reason: PoolReasons.invalidSpec, message: `spec.prefix: ${sizeProblem}` });
  // Known from the spec alone (the webhook refuses it too): say so before creating a VRF for nothing.
  const ranges = spec.create?.ipRanges;
  if (spec.vrfID === undefined && ranges !== undefined && !isSubnetInRanges(subnet, ranges)) {
    return notReady({
      reason: PoolReasons.vrfSubnetOutside,
      message: `the pool subnet ${subnet.text} is not inside spec.vrf.create.ipRanges (${ranges.join(', ')})`,
    });
  }

  /** A failed pass: remembered until its retry time, so that claim events in between do not repeat it. */
  const failedPass = (why: {
    reason: string;
    message: string;
    requeueAfterMs?: number;
    scope?: VrfScope;
    fingerprint?: string;
  }): VrfOutcome => {
    const failures = runtime.memory.failed(key, why.fingerprint);
    const requeueAfterMs = why.requeueAfterMs ?? retryDelayMs(runtime, failures);
    const pool = why.scope?.pool ?? input.pool;
    runtime.memory.hold(key, {
      uid: pool.metadata.uid ?? '',
      generation: pool.metadata.generation,
      reason: why.reason,
      message: why.message,
      untilMs: ctx.now().getTime() + requeueAfterMs,
    });
    return notReady({ ...why, requeueAfterMs });
  };

  const nowMs = ctx.now().getTime();
  const held = runtime.memory.held(key, input.pool, nowMs);
  if (held !== undefined) return notReady({ reason: held.reason, message: held.message, requeueAfterMs: held.untilMs - nowMs });
  const fresh = runtime.memory.fresh(key, input.pool, { nowMs, resyncMs: runtime.resyncMs });
  if (fresh !== undefined) {
    return {
      pool: input.pool,
      status: fresh.status,
      ready: true,
      condition: vrfReadyCondition({ ready: true, reason: PoolReasons.vrfReady, message: describeReady(fresh.status) }),
      reservedAddresses: reservedAddressesOf(fresh.status),
      requeueAfterMs: Math.max(0, fresh.atMs + runtime.resyncMs - nowMs),
      events: [],
    };
  }

  const credentials = await readCredentials(ctx.client, { ref, spec, controllerNamespace: runtime.controllerNamespace });
  if (credentials.kind === 'missing') return failedPass({ reason: PoolReasons.vrfCredentialsMissing, message: credentials.message });
  const fingerprint = MetalClients.fingerprint(credentials.token);
  // Decisions about ownership read status.vrf: read it from the server, not from a cache that may
  // not have seen the last pass's writes yet.
  const current = await ctx.client.get<IPPool>(poolTypeOf(ref.kind), poolObjectKey(ref));
  if (current === undefined) return notReady({ reason: PoolReasons.vrfError, message: `${formatPoolRef(ref)} is gone` });
  const scope: VrfScope = {
    ctx,
    ref,
    spec,
    subnet,
    metal: runtime.clients.clientFor(credentials.token),
    owner: { ref, clusterIdentity: runtime.clusterIdentity },
    allocated: input.allocated,
    pool: current,
    observed: {},
    createdNow: new Set(),
    events: [],
  };
  let outcome: StepOutcome = { kind: 'continue' };
  try {
    for (const step of steps) {
      outcome = await step(scope);
      if (outcome.kind !== 'continue') break;
    }
  } catch (err: unknown) {
    if (!isVrfMetalError(err)) throw err;
    // A Metal error ends the pass like a blocked step, retried when Metal says.
    outcome = blocked(PoolReasons.vrfError, err.message, err.retryAfterMs);
  }
  if (outcome.kind === 'blocked') {
    return failedPass({
      reason: outcome.reason,
      message: outcome.message,
      ...(outcome.requeueAfterMs === undefined ? {} : { requeueAfterMs: outcome.requeueAfterMs }),
      scope,
      fingerprint,
    });
  }
  const status = scope.pool.status?.vrf ?? {};
  // Verified as of now, when the pass ends: a slow pass must not come back stale at once.
  const verifiedAtMs = ctx.now().getTime();
  runtime.memory.succeeded(key, {
    uid: scope.pool.metadata.uid ?? '',
    generation: scope.pool.metadata.generation,
    status,
    atMs: verifiedAtMs,
    tokenFingerprint: fingerprint,
  });
  return {
    pool: scope.pool,
    status,
    ready: true,
    condition: vrfReadyCondition({ ready: true, reason: PoolReasons.vrfReady, message: describeReady(status) }),
    reservedAddresses: reservedAddressesOf(status),
    requeueAfterMs: runtime.resyncMs,
    events: scope.events,
  };
}
