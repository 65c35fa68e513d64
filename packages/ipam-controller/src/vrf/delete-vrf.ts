import { PoolEventReasons, PoolReasons, VrfResourceKinds, type IPPool, type VrfResourceKind } from '@metal-l2/api';
import type { MetalClient } from '@metal-l2/metal-api';
import type { ConditionInput } from '@metal-l2/kube';
import type { IpamContext } from '../context.js';
import { poolIndexKey, type PoolRef } from '../pool-ref.js';
import { readCredentials } from './credentials.js';
import { isVrfMetalError, metalCallOrGone } from './metal-call.js';
import { recordVrfStatus } from './record-status.js';
import { retryDelayMs } from './vrf-runtime.js';
import type { VrfEvent } from './vrf-scope.js';
import { idOf, isCreated, vrfReadyCondition, withoutResource } from './vrf-status.js';

/** How soon to look again at a VRF that still holds reservations of others. */
const VRF_IN_USE_RECHECK_MS = 30_000;

export type VrfDeletion =
  | { readonly kind: 'done'; readonly pool: IPPool; readonly events: readonly VrfEvent[] }
  | {
      readonly kind: 'waiting';
      readonly pool: IPPool;
      readonly condition: ConditionInput;
      readonly requeueAfterMs: number;
      readonly events: readonly VrfEvent[];
    };

/** Deleted in reverse order of creation: a gateway holds its reservation and VLAN, a VRF its reservations. */
const DELETE_ORDER: readonly VrfResourceKind[] = [...VrfResourceKinds].reverse();

interface DeleteScope {
  readonly ctx: IpamContext;
  readonly ref: PoolRef;
  readonly metal: MetalClient;
  pool: IPPool;
  readonly events: VrfEvent[];
}

/**
 * Called by the pool finalizer once the pool holds no allocation: deletes, gateway first and VRF
 * last, only what status.vrf.created says this pool created; adopted resources are left alone.
 * Each deletion is recorded in status at once, so a repeat starts where the last one stopped; a
 * 404 means already gone. Done at once, without a call, when the pool created nothing.
 */
export async function deleteVrfResources(ctx: IpamContext, input: { readonly ref: PoolRef; readonly pool: IPPool }): Promise<VrfDeletion> {
  const { ref } = input;
  const key = poolIndexKey(ref);
  const spec = input.pool.spec.vrf;
  const created = input.pool.status?.vrf?.created ?? [];
  if (spec === undefined || created.length === 0) {
    ctx.vrf.memory.forget(key);
    return { kind: 'done', pool: input.pool, events: [] };
  }
  const waiting = (why: { reason: string; message: string; requeueAfterMs: number; scope?: DeleteScope }): Promise<VrfDeletion> =>
    waitWithCondition(ctx, {
      ref,
      pool: why.scope?.pool ?? input.pool,
      condition: vrfReadyCondition({ ready: false, reason: why.reason, message: why.message }),
      requeueAfterMs: why.requeueAfterMs,
      events: why.scope?.events ?? [],
    });

  const metal = await clientForDeletion(ctx, ref, input.pool);
  if (metal.kind === 'missing') {
    const failures = ctx.vrf.memory.failed(key);
    return waiting({
      reason: PoolReasons.vrfCredentialsMissing,
      message: `cannot delete the Metal resources this pool created: ${metal.message}`,
      requeueAfterMs: retryDelayMs(ctx.vrf, failures),
    });
  }
  const scope: DeleteScope = { ctx, ref, metal: metal.client, pool: input.pool, events: [] };
  try {
    for (const kind of DELETE_ORDER) {
      if (!isCreated(scope.pool.status?.vrf, kind)) continue;
      const blocker = await deleteOne(scope, kind);
      if (blocker !== undefined)
        return await waiting({ reason: PoolReasons.deleting, message: blocker, requeueAfterMs: VRF_IN_USE_RECHECK_MS, scope });
    }
  } catch (err: unknown) {
    if (!isVrfMetalError(err)) throw err;
    const failures = ctx.vrf.memory.failed(key);
    return waiting({
      reason: PoolReasons.vrfError,
      message: err.message,
      requeueAfterMs: err.retryAfterMs ?? retryDelayMs(ctx.vrf, failures),
      scope,
    });
  }
  ctx.vrf.memory.forget(key);
  return { kind: 'done', pool: scope.pool, events: scope.events };
}

/** Deletes one resource and records that; returns why it must wait instead, if it must. */
async function deleteOne(scope: DeleteScope, kind: VrfResourceKind): Promise<string | undefined> {
  const status = scope.pool.status?.vrf ?? {};
  const id = idOf(status, kind) ?? (kind === 'MetalGateway' ? await findIntendedGateway(scope) : undefined);
  if (id !== undefined) {
    switch (kind) {
      case 'MetalGateway':
        await metalCallOrGone(`delete Metal Gateway ${id}`, () => scope.metal.metalGateways.delete(id));
        break;
      case 'Reservation':
        await metalCallOrGone(`delete reservation ${id} of ${status.subnet ?? '?'}`, () => scope.metal.ipReservations.delete(id));
        break;
      case 'VLAN':
        await metalCallOrGone(`delete VLAN ${status.vxlan ?? '?'} (${id})`, () => scope.metal.virtualNetworks.delete(id));
        break;
      case 'VRF': {
        // Another pool (or a person) may have reserved subnets in the VRF this pool created: never
        // take those down with it. Metal would refuse or cascade; either is worse than waiting.
        const remaining = await metalCallOrGone(`list reservations of VRF ${id}`, () => scope.metal.ipReservations.listInVrf(id));
        if (remaining !== undefined && remaining.length > 0) {
          const held = remaining.map((r) => `${r.network ?? '?'}/${r.cidr ?? '?'} (${r.id ?? '?'})`).join(', ');
          return `VRF ${id} still holds reservations this pool did not make: ${held}; it is deleted once they are gone`;
        }
        if (remaining !== undefined) await metalCallOrGone(`delete VRF ${id}`, () => scope.metal.vrfs.delete(id));
        break;
      }
    }
    scope.events.push({ type: 'Normal', reason: PoolEventReasons.metalResourceDeleted, message: `deleted ${describeKind(kind)} ${id}` });
  }
  scope.pool = await recordVrfStatus(scope.ctx, { ref: scope.ref, pool: scope.pool, change: (s) => withoutResource(s, kind) });
  return undefined;
}

/** A gateway marked as the pool's before its create call answered: the reservation names it, if it was made. */
async function findIntendedGateway(scope: DeleteScope): Promise<string | undefined> {
  const status = scope.pool.status?.vrf ?? {};
  const { vrfID, reservationID } = status;
  if (vrfID === undefined || reservationID === undefined) return undefined;
  const reservation = await metalCallOrGone(`read reservation ${reservationID}`, () =>
    scope.metal.ipReservations.getInVrf(vrfID, reservationID, { include: ['metal_gateway'] }),
  );
  return reservation?.metal_gateway?.id;
}

function describeKind(kind: VrfResourceKind): string {
  switch (kind) {
    case 'MetalGateway':
      return 'Metal Gateway';
    case 'Reservation':
      return 'reservation';
    case 'VLAN':
      return 'VLAN';
    case 'VRF':
      return 'VRF';
  }
}

/**
 * The client to delete with: from the Secret when it is still there, else the one that last
 * worked for this pool. Deleting a namespace deletes the Secret and the pool together, and the
 * pool's finalizer still has Metal work to do.
 */
async function clientForDeletion(
  ctx: IpamContext,
  ref: PoolRef,
  pool: IPPool,
): Promise<{ readonly kind: 'ok'; readonly client: MetalClient } | { readonly kind: 'missing'; readonly message: string }> {
  const spec = pool.spec.vrf;
  if (spec === undefined) return { kind: 'missing', message: 'the pool has no spec.vrf' };
  const credentials = await readCredentials(ctx.client, { ref, spec, controllerNamespace: ctx.vrf.controllerNamespace });
  if (credentials.kind === 'found') return { kind: 'ok', client: ctx.vrf.clients.clientFor(credentials.token) };
  const fingerprint = ctx.vrf.memory.tokenFingerprint(poolIndexKey(ref));
  const remembered = fingerprint === undefined ? undefined : ctx.vrf.clients.byFingerprint(fingerprint);
  return remembered === undefined ? { kind: 'missing', message: credentials.message } : { kind: 'ok', client: remembered };
}

async function waitWithCondition(
  ctx: IpamContext,
  input: {
    readonly ref: PoolRef;
    readonly pool: IPPool;
    readonly condition: ConditionInput;
    readonly requeueAfterMs: number;
    readonly events: readonly VrfEvent[];
  },
): Promise<VrfDeletion> {
  const pool = await recordVrfStatus(ctx, { ref: input.ref, pool: input.pool, change: (s) => s, condition: input.condition });
  return { kind: 'waiting', pool, condition: input.condition, requeueAfterMs: input.requeueAfterMs, events: input.events };
}
