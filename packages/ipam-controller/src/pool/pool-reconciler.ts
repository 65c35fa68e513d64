import { CapiAnnotations, PoolReasons, type IPPool } from '@metal-l2/api';
import { resolvePoolSpec, type ResolvedPool } from '@metal-l2/ipam-core';
import { done, patchStatusIfChanged, requeueAfter, soonest, type ReconcileResult } from '@metal-l2/kube';
import { viewClaim, type ClaimView } from '../claim/claim-contract.js';
import { IndexNames, type IpamContext } from '../context.js';
import { settleClaimsOfMissingPool } from './claim-decisions.js';
import { keptVrfView, reconcileDeletingPool } from './pool-deletion.js';
import { ensurePoolMetadata } from './pool-metadata.js';
import { poolOwnership } from './pool-ownership.js';
import { commitPoolPass, gatherScope } from './pool-pass.js';
import { poolIndexKey, poolObjectKey, poolTypeOf, type PoolRef } from '../pool-ref.js';
import type { PoolScope } from './pool-scope.js';
import { computePoolStatus } from './pool-status.js';
import { observeVrf } from './pool-vrf.js';

/** How soon a pool with a claim still held in two blocks is looked at again. */
const DUPLICATE_RECHECK_MS = 1_000;

/**
 * The pool reconciler, one branch per state of the pool: gone (its claims wait), paused (status
 * says so, nothing moves), deleting (pool-deletion.ts), live. A live pool with spec.vrf first
 * brings its Metal side to match (observeVrf: VRF, VLAN, reservation, Metal Gateway); until that
 * is ready it allocates nothing. Then one pass decides every claim and commits them together
 * (pool-pass.ts).
 */
export async function reconcilePool(ctx: IpamContext, ref: PoolRef): Promise<ReconcileResult> {
  const key = poolIndexKey(ref);
  const inCache = ctx.caches.pools[ref.kind].get(poolObjectKey(ref));
  const cached = inCache === undefined ? undefined : ctx.ownWrites.pools.fresher('', key, inCache);
  const claims = ctx.caches.claims.byIndex(IndexNames.byPool, key).map(viewClaim);
  if (cached === undefined) {
    ctx.vrf.memory.forget(key);
    ctx.statusBudget.forget(ref);
    ctx.ownWrites.pools.forget('', key);
    ctx.countWrites.forget(key);
    const labels = { kind: ref.kind, namespace: ref.namespace ?? '', pool: ref.name };
    for (const state of ['total', 'used', 'free', 'out_of_range']) ctx.metrics?.poolAddresses.remove({ ...labels, state });
    ctx.metrics?.poolObjectBytes.remove(labels);
    await settleClaimsOfMissingPool(ctx, ref, claims);
    return done();
  }
  if (isPausedPool(cached)) return writePausedStatus(ctx, gatherScope(ctx, { ref, pool: cached, claims, vrf: undefined }));
  if (cached.metadata.deletionTimestamp !== undefined) return reconcileDeletingPool(ctx, { ref, pool: cached, claims });
  return reconcileLivePool(ctx, { ref, pool: await ensurePoolMetadata(ctx, ref, cached), claims });
}

async function reconcileLivePool(
  ctx: IpamContext,
  input: { readonly ref: PoolRef; readonly pool: IPPool; readonly claims: readonly ClaimView[] },
): Promise<ReconcileResult> {
  const { ref, claims } = input;
  // A copy of another management cluster's global pool leaves Metal alone: the VRF, VLAN and
  // reservation are the source's, and its status.vrf did not come along.
  const observed =
    poolOwnership(ref, input.pool, ctx.managementCluster).kind === 'copied'
      ? { pool: input.pool, view: keptVrfView(input.pool, 'the pool is a copy of another management cluster’s') }
      : await observeVrf(ctx, { ref, pool: input.pool, resolved: resolve(input.pool) });
  const pass = await commitPoolPass(ctx, { ref, pool: observed.pool, claims, vrf: observed.view });
  switch (pass.kind) {
    case 'gone':
      return done();
    case 'deleting':
      return reconcileDeletingPool(ctx, { ref, pool: pass.pool, claims });
    case 'committed':
      return [
        pass.plan.nextExpiryInMs,
        observed.view?.requeueAfterMs,
        pass.countsDueInMs,
        // The reuse hold ends (reuse-hold.ts): allocation resumes then.
        pass.scope.blocker?.reason === PoolReasons.allocationRecordsLost
          ? Math.max(0, pass.scope.blocker.untilMs - ctx.now().getTime())
          : undefined,
        // The IPAddress that settles a claim held twice comes from this pass; its own watch event
        // wakes no pass (an echo of ours), so look again once the cache can have it.
        pass.plan.duplicatesPending > 0 ? DUPLICATE_RECHECK_MS : undefined,
      ].reduce<ReconcileResult>((result, afterMs) => (afterMs === undefined ? result : soonest(result, requeueAfter(afterMs))), done());
  }
}

function isPausedPool(pool: IPPool): boolean {
  return pool.metadata.annotations?.[CapiAnnotations.paused] !== undefined;
}

function resolve(pool: IPPool): ResolvedPool | undefined {
  const resolved = resolvePoolSpec(pool.spec);
  return resolved.ok ? resolved.pool : undefined;
}

async function writePausedStatus(ctx: Pick<IpamContext, 'client' | 'now'>, scope: PoolScope): Promise<ReconcileResult> {
  const status = computePoolStatus({
    current: scope.pool.status,
    state: undefined,
    blocker: { reason: PoolReasons.paused, message: `pool has the ${CapiAnnotations.paused} annotation; allocation and release are held` },
    vrf: scope.pool.spec.vrf === undefined && scope.pool.status?.vrf === undefined ? undefined : 'keep',
    movedOut: 'keep',
    generation: scope.pool.metadata.generation,
    now: ctx.now(),
  });
  await patchStatusIfChanged({
    client: ctx.client,
    type: poolTypeOf(scope.ref.kind),
    before: scope.pool,
    after: { ...scope.pool, status },
  });
  return done();
}
