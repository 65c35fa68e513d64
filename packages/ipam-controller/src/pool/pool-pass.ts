import { PoolReasons, type IPPool } from '@metal-l2/api';
import {
  decodeAllocations,
  formatIssues,
  parseAddress,
  rangesFromValues,
  resolvePoolSpec,
  subtractRanges,
  type Address,
  type ResolvedPool,
} from '@metal-l2/ipam-core';
import { isConflict, patchStatusIfChanged } from '@metal-l2/kube';
import type { ClaimView } from '../claim/claim-view.js';
import { clusterStateOf, mayActOn } from '../claim/cluster-state.js';
import { IndexNames, type IpamContext } from '../context.js';
import { planAllocations, type AllocationPlan } from './allocation-plan.js';
import { applyDecisions, removeAddressesOfDeletingClaims } from './claim-decisions.js';
import { isOlderPool, overlappingPools } from './pool-overlap.js';
import { formatPoolRef, poolIndexKey, poolObjectKey, poolTypeOf, type PoolRef } from '../pool-ref.js';
import type { PoolScope, VrfView } from './pool-scope.js';
import { computePoolStatus, type PoolBlocker } from './pool-status.js';
import { confirmUncachedClaims } from './uncached-claims.js';

/** How often a lost status race is retried at once, with a fresh read, before backing off. */
const COMMIT_ATTEMPTS = 8;

export interface PoolPassInput {
  readonly ref: PoolRef;
  readonly pool: IPPool;
  readonly claims: readonly ClaimView[];
  readonly vrf: VrfView | undefined;
  /** Overrides spec.addressReuseGracePeriodSeconds (a deleting pool releases at once). */
  readonly gracePeriodSeconds?: number | undefined;
}

/** How a pass ended: committed; the pool is gone; or a live pool started deleting meanwhile. */
export type PoolPassResult =
  | { readonly kind: 'committed'; readonly scope: PoolScope; readonly plan: AllocationPlan; readonly written: IPPool }
  | { readonly kind: 'gone' }
  | { readonly kind: 'deleting'; readonly pool: IPPool };

/**
 * One pass over a pool: every claim is decided at once and committed in one status write guarded
 * by the pool's resourceVersion (group commit); IPAddresses and claim status follow the commit. A
 * lost race re-reads the pool from the API server and decides again, so two writers (a stale
 * cache, a second replica) can never hand out the same address.
 */
export async function commitPoolPass(ctx: IpamContext, input: PoolPassInput): Promise<PoolPassResult> {
  const { ref, claims } = input;
  const deleting = input.pool.metadata.deletionTimestamp !== undefined;
  let pool: IPPool | undefined = input.pool;
  for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
    if (pool === undefined) return { kind: 'gone' };
    if (!deleting && pool.metadata.deletionTimestamp !== undefined) return { kind: 'deleting', pool };
    const scope = gatherScope(ctx, { ref, pool, claims, vrf: input.vrf });
    const uncached = await confirmUncachedClaims(ctx, scope);
    const releasable = await removeAddressesOfDeletingClaims(ctx, scope, uncached.orphanAddresses);
    const plan = decide(ctx, scope, { releasable, uncached: uncached.live, gracePeriodSeconds: input.gracePeriodSeconds });
    let written: IPPool;
    try {
      written = await commitStatus(ctx, scope, plan);
    } catch (err: unknown) {
      if (!isConflict(err)) throw err;
      ctx.metrics?.commitConflicts.inc({ kind: ref.kind });
      // Someone else wrote the pool since we read it: read it again and decide again.
      pool = await ctx.client.get<IPPool>(poolTypeOf(ref.kind), poolObjectKey(ref));
      continue;
    }
    await applyDecisions(ctx, scope, plan);
    if (plan.conflicts.length > 0) {
      ctx.events.event(written, { type: 'Warning', reason: 'AllocationConflict', message: plan.conflicts.slice(0, 5).join('; ') });
    }
    return { kind: 'committed', scope, plan, written };
  }
  if (pool === undefined) return { kind: 'gone' };
  throw new Error(`could not commit allocations of ${formatPoolRef(ref)}: lost ${COMMIT_ATTEMPTS} status races in a row`);
}

/**
 * The webhook refuses overlap, but two pools created at the same moment both pass it (each is
 * checked against a cache without the other): the older pool serves, the younger waits.
 */
function olderOverlappingPools(ctx: IpamContext, pool: IPPool, resolved: ResolvedPool): ReturnType<typeof overlappingPools> {
  return overlappingPools(pool, resolved, cachedPools(ctx)).filter(
    (o) => o.other.metadata.deletionTimestamp === undefined && isOlderPool(o.other, pool),
  );
}

/**
 * What younger overlapping pools already handed out (before they saw this pool and stopped):
 * never handed out again by the older pool, so an address is never held twice.
 */
function heldByYoungerPools(ctx: IpamContext, pool: IPPool, resolved: ResolvedPool): string[] {
  return overlappingPools(pool, resolved, cachedPools(ctx))
    .filter((o) => !isOlderPool(o.other, pool))
    .flatMap((o) => decodeAllocations(o.other.status?.allocations ?? {}).allocations.map((a) => a.address));
}

function cachedPools(ctx: IpamContext): IPPool[] {
  return [
    ...ctx.caches.pools.InClusterIPPool.list().map((p): IPPool => ({ ...p, kind: 'InClusterIPPool' })),
    ...ctx.caches.pools.GlobalInClusterIPPool.list().map((p): IPPool => ({ ...p, kind: 'GlobalInClusterIPPool' })),
  ];
}

/** What one pass works from: the pool, its claims and IPAddresses, and what stands in its way. */
export function gatherScope(
  ctx: IpamContext,
  input: { ref: PoolRef; pool: IPPool; claims: readonly ClaimView[]; vrf: VrfView | undefined },
): PoolScope {
  const { ref, pool, vrf } = input;
  const decoded = decodeAllocations(pool.status?.allocations ?? {});
  const resolved = resolvePoolSpec(pool.spec);
  const addresses = ctx.caches.addresses.byIndex(IndexNames.byPool, poolIndexKey(ref));
  let blocker: PoolBlocker | undefined;
  let overlap: ReturnType<typeof overlappingPools> = [];
  if (!resolved.ok) {
    blocker = { reason: PoolReasons.invalidSpec, message: formatIssues(resolved.issues) };
  } else if (pool.metadata.deletionTimestamp !== undefined) {
    blocker = { reason: PoolReasons.deleting, message: 'pool is being deleted' };
  } else if ((overlap = olderOverlappingPools(ctx, pool, resolved.pool)).length > 0) {
    blocker = {
      reason: PoolReasons.overlapping,
      message: `${overlap.map((o) => o.issue.message).join('; ')} (an older pool); allocating nothing`,
    };
  } else if (vrf !== undefined && !vrf.ready) {
    blocker = { reason: PoolReasons.vrfNotReady, message: vrf.message };
  }
  return {
    ref,
    pool,
    resolved: resolved.ok
      ? withoutReserved(resolved.pool, [...(vrf?.reservedAddresses ?? []), ...heldByYoungerPools(ctx, pool, resolved.pool)])
      : undefined,
    blocker,
    vrf,
    allocations: decoded.allocations,
    claims: input.claims,
    addresses,
  };
}

/** The pool minus what Metal uses itself (the Metal Gateway's address): never handed out. */
function withoutReserved(pool: ResolvedPool, reserved: readonly string[]): ResolvedPool {
  const values = reserved
    .map(parseAddress)
    .filter((a): a is Address => a !== undefined && a.family === pool.family)
    .map((a) => a.value);
  return values.length === 0 ? pool : { ...pool, allocatable: subtractRanges(pool.allocatable, rangesFromValues(values)) };
}

/**
 * `uncached`: claims the cache lacks that the API server confirmed live; they keep what status
 * gives them and are otherwise left alone until the cache sees them.
 */
function decide(
  ctx: IpamContext,
  scope: PoolScope,
  claims: { releasable: readonly ClaimView[]; uncached: readonly ClaimView[]; gracePeriodSeconds: number | undefined },
): AllocationPlan {
  const { releasable } = claims;
  const acting: ClaimView[] = [];
  const held: ClaimView[] = [...claims.uncached];
  for (const claim of scope.claims) (mayActOn(claim, clusterStateOf(ctx, claim)) ? acting : held).push(claim);
  const resolved = scope.resolved ?? emptyPool();
  return planAllocations({
    isGlobal: scope.ref.namespace === undefined,
    pool: resolved,
    allocations: scope.allocations,
    claims: acting,
    heldClaims: held,
    releasable,
    addresses: scope.addresses.map((a) => ({
      namespace: a.metadata.namespace ?? '',
      name: a.metadata.name ?? '',
      claimName: a.spec.claimRef.name,
      address: a.spec.address,
    })),
    canAllocate: scope.blocker === undefined && scope.resolved !== undefined,
    gracePeriodSeconds: claims.gracePeriodSeconds ?? scope.pool.spec.addressReuseGracePeriodSeconds ?? 0,
    now: ctx.now(),
    watchNamespace: ctx.watchNamespace,
  });
}

/** Returns the pool as the server has it after the write (the scope's pool when nothing changed). */
async function commitStatus(ctx: IpamContext, scope: PoolScope, plan: AllocationPlan): Promise<IPPool> {
  const status = computePoolStatus({
    current: scope.pool.status,
    allocations: plan.allocations,
    state: scope.resolved === undefined ? undefined : plan.state,
    blocker: scope.blocker,
    vrf: scope.vrf?.write,
    generation: scope.pool.metadata.generation,
    now: ctx.now(),
  });
  const written = await patchStatusIfChanged({
    client: ctx.client,
    type: poolTypeOf(scope.ref.kind),
    before: scope.pool,
    after: { ...scope.pool, status },
  });
  recordMetrics(ctx, scope, { plan, written: written !== undefined, counts: status.ipAddresses });
  if (written !== undefined && plan.changed) {
    ctx.logger.info('committed allocations', {
      pool: formatPoolRef(scope.ref),
      allocated: plan.newlyAllocated,
      released: plan.released.length,
      recovered: plan.recovered,
      total: plan.allocations.length,
    });
  }
  return written ?? scope.pool;
}

function recordMetrics(
  ctx: IpamContext,
  scope: PoolScope,
  outcome: {
    plan: AllocationPlan;
    written: boolean;
    counts: { total: number; used: number; free: number; outOfRange: number } | undefined;
  },
): void {
  const metrics = ctx.metrics;
  if (metrics === undefined) return;
  const kind = scope.ref.kind;
  if (outcome.written) {
    metrics.allocations.inc({ kind }, outcome.plan.newlyAllocated);
    metrics.releases.inc({ kind }, outcome.plan.released.length);
  }
  const counts = outcome.counts;
  if (counts === undefined) return;
  const labels = { kind, namespace: scope.ref.namespace ?? '', pool: scope.ref.name };
  metrics.poolAddresses.set({ ...labels, state: 'total' }, counts.total);
  metrics.poolAddresses.set({ ...labels, state: 'used' }, counts.used);
  metrics.poolAddresses.set({ ...labels, state: 'free' }, counts.free);
  metrics.poolAddresses.set({ ...labels, state: 'out_of_range' }, counts.outOfRange);
}

function emptyPool(): ResolvedPool {
  return { family: 4, prefix: 32, subnet: { start: 0n, end: 0n }, addresses: [], allocatable: [] };
}
