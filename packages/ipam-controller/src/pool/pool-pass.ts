import { PoolReasons, type IPAddress, type IPPool } from '@metal-l2/api';
import {
  formatIssues,
  parseAddress,
  rangesFromValues,
  resolvePoolSpec,
  subtractRanges,
  type Address,
  type Allocation,
  type ResolvedPool,
} from '@metal-l2/ipam-core';
import { isConflict } from '@metal-l2/kube';
import { clusterStateOf, mayActOn, type ClaimView } from '../claim/claim-contract.js';
import { IndexNames, type IpamContext } from '../context.js';
import { planAllocations, type AddressView, type AllocationPlan } from './allocation-plan.js';
import { applyDecisions, removeAddressesOfDeletingClaims } from './claim-decisions.js';
import { isOlderPool, overlappingPools } from './pool-overlap.js';
import { formatPoolRef, poolIndexKey, poolObjectKey, poolTypeOf, type PoolRef } from '../pool-ref.js';
import type { PoolScope, VrfView } from './pool-scope.js';
import { commitStatus, recordCommitted } from './pool-commit.js';
import type { PoolBlocker } from './pool-status.js';
import { ensureBlockLayout } from '../block/block-layout-of-pool.js';
import type { BlockLayout } from '../block/block-layout.js';
import { migrateLegacyAllocations } from '../block/block-migration.js';
import { allocationsOfBlocks, cachedBlocks, commitBlocks, poolAllocations, type BlockSet } from '../block/block-store.js';
import { confirmUncachedClaims } from './uncached-claims.js';
import { ensurePoolMetadata } from './pool-metadata.js';
import { copiedPoolBlocker, poolOwnership } from './pool-ownership.js';
import { checkBlockCount, reuseHoldBlocker } from './reuse-hold.js';

/** How often a lost race (a block or the pool written by someone else) is retried at once, with a fresh read. */
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
  | {
      readonly kind: 'committed';
      readonly scope: PoolScope;
      readonly plan: AllocationPlan;
      readonly written: IPPool;
      /** The pool's counts were held back (count-writes.ts): come back then. */
      readonly countsDueInMs?: number | undefined;
    }
  | { readonly kind: 'gone' }
  | { readonly kind: 'deleting'; readonly pool: IPPool };

/**
 * One pass over a pool: every claim is decided at once and committed to the pool's blocks, one
 * status write per changed block guarded by that block's resourceVersion (group commit per
 * block); the pool's status (counts, conditions) follows, then IPAddresses and claim status. A
 * lost race re-reads what it lost against and decides again, so two writers (a stale cache, a
 * second replica) can never hand out the same address.
 */
export async function commitPoolPass(ctx: IpamContext, input: PoolPassInput): Promise<PoolPassResult> {
  const { ref, claims } = input;
  const deleting = input.pool.metadata.deletionTimestamp !== undefined;
  let pool: IPPool | undefined = input.pool;
  let blocks: BlockSet = cachedBlocks(ctx, input.pool);
  for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
    if (pool === undefined) return { kind: 'gone' };
    if (!deleting && pool.metadata.deletionTimestamp !== undefined) return { kind: 'deleting', pool };
    const ready = await layoutAndMigrate(ctx, ref, { pool, blocks });
    if (ready.kind === 'retry') {
      pool = ready.pool;
      blocks = ready.blocks;
      continue;
    }
    ({ pool, blocks } = ready);
    const scope = gatherScope(ctx, { ref, pool, claims, vrf: input.vrf, allocations: allocationsOfBlocks(blocks) });
    const uncached = await confirmUncachedClaims(ctx, scope);
    const releasable = await removeAddressesOfDeletingClaims(ctx, scope, uncached.orphanAddresses);
    const plan = decide(ctx, scope, {
      releasable,
      uncached: uncached.live,
      left: uncached.left,
      gracePeriodSeconds: input.gracePeriodSeconds,
    });
    const commit = await commitBlocks(ctx, { ref, pool, layout: ready.layout, blocks, allocations: plan.allocations });
    blocks = commit.blocks;
    recordCommitted(ctx, { ref, plan, commit });
    if (commit.kind === 'conflict') continue;
    let written: IPPool;
    let countsDueInMs: number | undefined;
    try {
      ({ pool: written, countsDueInMs } = await commitStatus(ctx, {
        scope,
        plan,
        blockWrites: commit.writes,
        blockCount: commit.blocks.size,
        left: uncached.left,
      }));
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
    return { kind: 'committed', scope, plan, written, countsDueInMs };
  }
  if (pool === undefined) return { kind: 'gone' };
  throw new Error(`could not commit allocations of ${formatPoolRef(ref)}: lost ${COMMIT_ATTEMPTS} races in a row`);
}

/**
 * Before a pass decides anything: the pool's block layout is recorded (and then the pool stamped
 * as this management cluster's), allocations a pool written before blocks keeps in its own status
 * are in blocks, and a lost block is noticed (reuse-hold.ts). 'retry': start over from these.
 */
async function layoutAndMigrate(
  ctx: IpamContext,
  ref: PoolRef,
  current: { pool: IPPool; blocks: BlockSet },
): Promise<
  { kind: 'ready'; pool: IPPool; blocks: BlockSet; layout: BlockLayout } | { kind: 'retry'; pool: IPPool | undefined; blocks: BlockSet }
> {
  let pool = current.pool;
  let layout: BlockLayout;
  try {
    ({ pool, layout } = await ensureBlockLayout(ctx, ref, pool));
    pool = await ensurePoolMetadata(ctx, ref, pool);
  } catch (err: unknown) {
    if (!isConflict(err)) throw err;
    return { kind: 'retry', pool: await ctx.client.get<IPPool>(poolTypeOf(ref.kind), poolObjectKey(ref)), blocks: current.blocks };
  }
  const migration = await migrateLegacyAllocations(ctx, { ref, pool, layout, blocks: current.blocks });
  if (migration.kind === 'conflict') return { kind: 'retry', pool: migration.pool, blocks: migration.blocks };
  const migrated = migration.kind === 'migrated' ? { pool: migration.pool, blocks: migration.blocks } : { pool, blocks: current.blocks };
  try {
    return { kind: 'ready', ...(await checkBlockCount(ctx, { ref, layout, ...migrated })), layout };
  } catch (err: unknown) {
    if (!isConflict(err)) throw err;
    return { kind: 'retry', pool: await ctx.client.get<IPPool>(poolTypeOf(ref.kind), poolObjectKey(ref)), blocks: migrated.blocks };
  }
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
    .flatMap((o) => poolAllocations(ctx, o.other).map((a) => a.address));
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
  input: {
    ref: PoolRef;
    pool: IPPool;
    claims: readonly ClaimView[];
    vrf: VrfView | undefined;
    /** Default: what the pool's cached blocks and its own status hold. */
    allocations?: readonly Allocation[];
  },
): PoolScope {
  const { ref, pool, vrf } = input;
  const allocations = input.allocations ?? poolAllocations(ctx, pool);
  const resolved = resolvePoolSpec(pool.spec);
  const addresses = ctx.caches.addresses.byIndex(IndexNames.byPool, poolIndexKey(ref));
  return {
    ref,
    pool,
    resolved: resolved.ok
      ? withoutReserved(resolved.pool, [...(vrf?.reservedAddresses ?? []), ...heldByYoungerPools(ctx, pool, resolved.pool)])
      : undefined,
    blocker: blockerOf(ctx, { ref, pool, resolved, vrf }),
    vrf,
    allocations,
    claims: input.claims,
    addresses,
  };
}

/** What stands in the way of handing out addresses, the most lasting first; undefined: nothing. */
function blockerOf(
  ctx: IpamContext,
  input: { ref: PoolRef; pool: IPPool; resolved: ReturnType<typeof resolvePoolSpec>; vrf: VrfView | undefined },
): PoolBlocker | undefined {
  const { ref, pool, resolved, vrf } = input;
  if (!resolved.ok) return { reason: PoolReasons.invalidSpec, message: formatIssues(resolved.issues) };
  if (pool.metadata.deletionTimestamp !== undefined) return { reason: PoolReasons.deleting, message: 'pool is being deleted' };
  const ownership = poolOwnership(ref, pool, ctx.managementCluster);
  if (ownership.kind === 'copied') return copiedPoolBlocker(ref, ownership.from, ctx.managementCluster);
  const overlap = olderOverlappingPools(ctx, pool, resolved.pool);
  if (overlap.length > 0) {
    return {
      reason: PoolReasons.overlapping,
      message: `${overlap.map((o) => o.issue.message).join('; ')} (an older pool); allocating nothing`,
    };
  }
  if (vrf !== undefined && !vrf.ready) return { reason: PoolReasons.vrfNotReady, message: vrf.message };
  return reuseHoldBlocker(pool, ctx.now());
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
  claims: {
    releasable: readonly ClaimView[];
    uncached: readonly ClaimView[];
    left: readonly IPAddress[];
    gracePeriodSeconds: number | undefined;
  },
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
    leftClaims: claims.left.map((a) => ({ namespace: a.metadata.namespace ?? '', name: a.spec.claimRef.name })),
    releasable,
    addresses: scope.addresses.map(addressView),
    canAllocate: scope.blocker === undefined && scope.resolved !== undefined,
    gracePeriodSeconds: claims.gracePeriodSeconds ?? scope.pool.spec.addressReuseGracePeriodSeconds ?? 0,
    now: ctx.now(),
    watchNamespace: ctx.watchNamespace,
  });
}

// One view per IPAddress version (the cache hands out one object per version), so what the plan
// derives from a view (its canonical address) is derived once.
const addressViews = new WeakMap<IPAddress, AddressView>();

function addressView(a: IPAddress): AddressView {
  let view = addressViews.get(a);
  if (view === undefined) {
    view = { namespace: a.metadata.namespace ?? '', name: a.metadata.name ?? '', claimName: a.spec.claimRef.name, address: a.spec.address };
    addressViews.set(a, view);
  }
  return view;
}

function emptyPool(): ResolvedPool {
  return { family: 4, prefix: 32, subnet: { start: 0n, end: 0n }, addresses: [], allocatable: [] };
}
