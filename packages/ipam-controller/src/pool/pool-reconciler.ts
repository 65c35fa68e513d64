import {
  CapiAnnotations,
  ClaimReasons,
  IpamFinalizers,
  PoolReasons,
  type IPAddress,
  type IPPool,
} from '@metal-l2/api';
import {
  decodeAllocations,
  formatIssues,
  resolvePoolSpec,
  type Allocation,
  type ResolvedPool,
} from '@metal-l2/ipam-core';
import { done, isConflict, isNotFound, patchStatusIfChanged, requeueAfter, type ObjectKey, type ReconcileResult } from '@metal-l2/kube';
import { buildIPAddress } from '../claim/ip-address.js';
import { clusterStateOf, mayActOn } from '../claim/cluster-state.js';
import type { ClaimOutcome } from '../claim/claim-status.js';
import { viewClaim, type ClaimView } from '../claim/claim-view.js';
import { deleteIPAddress, ensureClaimFinalizer, ensureIPAddress, removeClaimFinalizer, writeClaimStatus } from '../claim/claim-writes.js';
import { IndexNames, type IpamContext } from '../context.js';
import { forEachBounded } from '../parallel.js';
import { planAllocations, type AllocationPlan, type ClaimDecision } from './allocation-plan.js';
import { computePoolStatus, type PoolBlocker } from './pool-status.js';
import { formatPoolRef, poolIndexKey, poolTypeOf, type PoolRef } from './pool-ref.js';

/** How often a lost status race is retried at once, with a fresh read, before backing off. */
const COMMIT_ATTEMPTS = 8;

/** What one pass over a pool found, before anything was written. */
interface PoolScope {
  readonly ref: PoolRef;
  readonly pool: IPPool;
  readonly resolved: ResolvedPool | undefined;
  readonly blocker: PoolBlocker | undefined;
  readonly allocations: readonly Allocation[];
  readonly claims: readonly ClaimView[];
  readonly addresses: readonly IPAddress[];
}

/**
 * The pool reconciler: every claim of a pool is decided in one pass and committed in one status
 * write guarded by the pool's resourceVersion (group commit). IPAddresses and claim status follow
 * the commit. A lost race re-reads the pool from the API server and decides again, so two writers
 * (a stale cache, a second replica) can never hand out the same address.
 */
export async function reconcilePool(ctx: IpamContext, ref: PoolRef): Promise<ReconcileResult> {
  const cached = ctx.caches.pools[ref.kind].get(poolObjectKey(ref));
  const claims = ctx.caches.claims.byIndex(IndexNames.byPool, poolIndexKey(ref)).map(viewClaim);
  if (cached === undefined) return reconcileMissingPool(ctx, ref, claims);

  let pool: IPPool | undefined = cached;
  for (let attempt = 0; attempt < COMMIT_ATTEMPTS && pool !== undefined; attempt++) {
    if (isPausedPool(pool)) return writePausedStatus(ctx, gatherScope(ctx, { ref, pool, claims }));
    pool = await ensurePoolFinalizer(ctx, ref, pool);
    const scope = gatherScope(ctx, { ref, pool, claims });
    const releasable = await removeAddressesOfDeletingClaims(ctx, scope);
    const plan = decide(ctx, scope, releasable);
    try {
      await commitStatus(ctx, scope, plan);
    } catch (err: unknown) {
      if (!isConflict(err)) throw err;
      // Someone else wrote the pool since we read it: read it again and decide again.
      pool = await ctx.client.get<IPPool>(poolTypeOf(ref.kind), poolObjectKey(ref));
      continue;
    }
    await applyDecisions(ctx, scope, plan);
    await finishPoolDeletion(ctx, scope, plan);
    if (plan.conflicts.length > 0) {
      ctx.events.event(pool, { type: 'Warning', reason: 'AllocationConflict', message: plan.conflicts.slice(0, 5).join('; ') });
    }
    return plan.nextExpiryInMs === undefined ? done() : requeueAfter(plan.nextExpiryInMs);
  }
  if (pool === undefined) return done();
  throw new Error(`could not commit allocations of ${formatPoolRef(ref)}: lost ${COMMIT_ATTEMPTS} status races in a row`);
}

export function poolObjectKey(ref: PoolRef): ObjectKey {
  return ref.namespace === undefined ? { name: ref.name } : { namespace: ref.namespace, name: ref.name };
}

function isPausedPool(pool: IPPool): boolean {
  return pool.metadata.annotations?.[CapiAnnotations.paused] !== undefined;
}

function gatherScope(ctx: IpamContext, found: { ref: PoolRef; pool: IPPool; claims: readonly ClaimView[] }): PoolScope {
  const { ref, pool, claims } = found;
  const decoded = decodeAllocations(pool.status?.allocations ?? {});
  const resolved = resolvePoolSpec(pool.spec);
  const addresses = ctx.caches.addresses.byIndex(IndexNames.byPool, poolIndexKey(ref));
  let blocker: PoolBlocker | undefined;
  if (!resolved.ok) {
    blocker = { reason: PoolReasons.invalidSpec, message: formatIssues(resolved.issues) };
  } else if (pool.metadata.deletionTimestamp !== undefined) {
    blocker = { reason: PoolReasons.deleting, message: 'pool is being deleted' };
  }
  return { ref, pool, resolved: resolved.ok ? resolved.pool : undefined, blocker, allocations: decoded.allocations, claims, addresses };
}

/** Returns the pool as written, so the status write that follows is guarded by its new version. */
async function ensurePoolFinalizer(ctx: IpamContext, ref: PoolRef, pool: IPPool): Promise<IPPool> {
  const finalizers = pool.metadata.finalizers ?? [];
  if (pool.metadata.deletionTimestamp !== undefined || finalizers.includes(IpamFinalizers.protectPool)) return pool;
  return ctx.client.patch<IPPool>(
    poolTypeOf(ref.kind),
    poolObjectKey(ref),
    { metadata: { finalizers: [...finalizers, IpamFinalizers.protectPool] } },
    { ...(pool.metadata.resourceVersion === undefined ? {} : { resourceVersion: pool.metadata.resourceVersion }) },
  );
}

/**
 * A deleting claim's address is released only after its IPAddress is gone (asked of the API
 * server), so an existing IPAddress always has its allocation in status. Orphaned IPAddresses,
 * whose claim is gone without us, are removed the same way.
 */
async function removeAddressesOfDeletingClaims(ctx: IpamContext, scope: PoolScope): Promise<ClaimView[]> {
  const deleting = scope.claims.filter((c) => c.isDeleting && c.hasFinalizer && mayActOn(c, clusterStateOf(ctx, c)));
  const live = new Set(scope.claims.map((c) => `${c.namespace}/${c.name}`));
  const orphans = scope.addresses.filter((a) => !live.has(`${a.metadata.namespace ?? ''}/${a.spec.claimRef.name}`));
  const releasable: ClaimView[] = [];
  await forEachBounded([...deleting.map((c) => ({ claim: c, key: { namespace: c.namespace, name: c.name } })), ...orphans.map((a) => ({ claim: undefined, key: { namespace: a.metadata.namespace ?? '', name: a.metadata.name ?? '' } }))], ctx.writeConcurrency, async ({ claim, key }) => {
    const gone = await deleteIPAddress(ctx, key);
    if (gone && claim !== undefined) releasable.push(claim);
  });
  return releasable;
}

function decide(ctx: IpamContext, scope: PoolScope, releasable: readonly ClaimView[]): AllocationPlan {
  const acting: ClaimView[] = [];
  const held: ClaimView[] = [];
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
    // Deleting a pool releases at once: nobody will be handed the address again from it.
    gracePeriodSeconds: scope.blocker?.reason === PoolReasons.deleting ? 0 : scope.pool.spec.addressReuseGracePeriodSeconds ?? 0,
    now: ctx.now(),
    watchNamespace: ctx.watchNamespace,
  });
}

async function commitStatus(ctx: IpamContext, scope: PoolScope, plan: AllocationPlan): Promise<void> {
  const status = computePoolStatus({
    current: scope.pool.status,
    allocations: plan.allocations,
    state: scope.resolved === undefined ? undefined : plan.state,
    blocker: scope.blocker,
    generation: scope.pool.metadata.generation,
    now: ctx.now(),
  });
  const written = await patchStatusIfChanged({ client: ctx.client, type: poolTypeOf(scope.ref.kind), before: scope.pool, after: { ...scope.pool, status } });
  if (written !== undefined && plan.changed) {
    ctx.logger.info('committed allocations', {
      pool: formatPoolRef(scope.ref),
      allocated: plan.newlyAllocated,
      released: plan.released.length,
      recovered: plan.recovered,
      total: plan.allocations.length,
    });
  }
}

function outcomeOf(scope: PoolScope, decision: ClaimDecision): ClaimOutcome {
  switch (decision.kind) {
    case 'bound':
      return { kind: 'bound', addressName: decision.claim.name, address: decision.address };
    case 'exhausted':
      return { kind: 'waiting', reason: ClaimReasons.poolExhausted, message: `${formatPoolRef(scope.ref)} has no free address` };
    case 'failed':
      return { kind: 'waiting', reason: ClaimReasons.allocationFailed, message: decision.message };
    case 'not-ready':
      return {
        kind: 'waiting',
        reason: ClaimReasons.poolNotReady,
        message: `${formatPoolRef(scope.ref)} is not ready: ${scope.blocker?.message ?? 'its spec is invalid'}`,
      };
  }
}

/** After the commit: IPAddresses, finalizers and claim status follow what status now says. */
async function applyDecisions(ctx: IpamContext, scope: PoolScope, plan: AllocationPlan): Promise<void> {
  const conflicts: string[] = [];
  await forEachBounded(plan.decisions, ctx.writeConcurrency, async (decision) => {
    const { claim } = decision;
    if (decision.kind === 'bound') {
      await ensureClaimFinalizer(ctx, claim);
      const result = await ensureIPAddress(
        ctx,
        buildIPAddress({
          claim,
          pool: { ...scope.ref, uid: scope.pool.metadata.uid ?? '' },
          address: decision.address,
          prefix: scope.pool.spec.prefix,
          gateway: scope.pool.spec.gateway,
          version: ctx.version,
        }),
      );
      if (result.kind === 'conflict') {
        conflicts.push(result.message);
        await writeClaimStatus(ctx, claim, { kind: 'waiting', reason: ClaimReasons.allocationFailed, message: result.message });
        return;
      }
    }
    await writeClaimStatus(ctx, claim, outcomeOf(scope, decision));
  });
  await forEachBounded(plan.released, ctx.writeConcurrency, (claim) => removeClaimFinalizer(ctx, claim));
  if (conflicts.length > 0) {
    ctx.events.event(scope.pool, { type: 'Warning', reason: 'AllocationConflict', message: conflicts.slice(0, 5).join('; ') });
  }
}

/** The pool keeps its finalizer until no address is held (released ones included). */
async function finishPoolDeletion(ctx: IpamContext, scope: PoolScope, plan: AllocationPlan): Promise<void> {
  if (scope.pool.metadata.deletionTimestamp === undefined || plan.allocations.length > 0) return;
  const finalizers = scope.pool.metadata.finalizers ?? [];
  if (!finalizers.includes(IpamFinalizers.protectPool)) return;
  try {
    await ctx.client.patch(poolTypeOf(scope.ref.kind), poolObjectKey(scope.ref), {
      metadata: { finalizers: finalizers.filter((f) => f !== IpamFinalizers.protectPool) },
    });
  } catch (err: unknown) {
    if (!isNotFound(err)) throw err;
  }
}

async function writePausedStatus(ctx: IpamContext, scope: PoolScope): Promise<ReconcileResult> {
  const status = computePoolStatus({
    current: scope.pool.status,
    allocations: scope.allocations,
    state: undefined,
    blocker: { reason: PoolReasons.paused, message: `pool has the ${CapiAnnotations.paused} annotation; allocation and release are held` },
    generation: scope.pool.metadata.generation,
    now: ctx.now(),
  });
  await patchStatusIfChanged({ client: ctx.client, type: poolTypeOf(scope.ref.kind), before: scope.pool, after: { ...scope.pool, status } });
  return done();
}

/**
 * Claims of a pool that does not exist wait with PoolNotReady, and get the address as soon as the
 * pool appears. A deleting claim is let go (its IPAddress removed first) since no pool holds its address.
 */
async function reconcileMissingPool(ctx: IpamContext, ref: PoolRef, claims: readonly ClaimView[]): Promise<ReconcileResult> {
  await forEachBounded(claims, ctx.writeConcurrency, async (claim) => {
    if (!mayActOn(claim, clusterStateOf(ctx, claim))) return;
    if (claim.isDeleting) {
      if (await deleteIPAddress(ctx, { namespace: claim.namespace, name: claim.name })) await removeClaimFinalizer(ctx, claim);
      return;
    }
    if (claim.object.status?.addressRef?.name !== undefined) return;
    await writeClaimStatus(ctx, claim, { kind: 'waiting', reason: ClaimReasons.poolNotReady, message: `${formatPoolRef(ref)} not found` });
  });
  return done();
}

function emptyPool(): ResolvedPool {
  return { family: 4, prefix: 32, subnet: { start: 0n, end: 0n }, addresses: [], allocatable: [] };
}
