import type { IPAddress, IPPool } from '@metal-l2/api';
import { patchStatusIfChanged } from '@metal-l2/kube';
import type { IpamContext } from '../context.js';
import type { BlockCommit } from '../block/block-store.js';
import { formatPoolRef, poolIndexKey, poolTypeOf, type PoolRef } from '../pool-ref.js';
import type { AllocationPlan } from './allocation-plan.js';
import type { PoolScope } from './pool-scope.js';
import { changesCountsOnly } from './count-writes.js';
import { computePoolStatus } from './pool-status.js';
import { movedOutCondition } from './pool-ownership.js';

/**
 * Writes the pool's status after a pass's blocks were committed (counts, conditions,
 * observedGeneration; one merge patch guarded by resourceVersion, nothing when nothing changed)
 * and reports the pass: log line and metrics. A change of the counts alone waits until the pool's
 * last status write is COUNT_WRITE_INTERVAL_MS old (count-writes.ts): `countsDueInMs` says when
 * to come back. Returns the pool as the server has it after the write (the scope's pool when
 * nothing was written).
 */
export async function commitStatus(
  ctx: IpamContext,
  input: {
    readonly scope: PoolScope;
    readonly plan: AllocationPlan;
    readonly blockWrites: number;
    /** How many IPAddressBlocks the pool has after the commit. */
    readonly blockCount: number;
    /** IPAddresses kept for claims that left unreleased (uncached-claims.ts). */
    readonly left: readonly IPAddress[];
  },
): Promise<{ readonly pool: IPPool; readonly countsDueInMs?: number | undefined }> {
  const { scope, plan } = input;
  const key = poolIndexKey(scope.ref);
  const uid = scope.pool.metadata.uid ?? '';
  const status = computePoolStatus({
    current: scope.pool.status,
    state: scope.resolved === undefined ? undefined : plan.state,
    blocker: scope.blocker,
    vrf: scope.vrf?.write,
    generation: scope.pool.metadata.generation,
    now: ctx.now(),
    blockCount: input.blockCount,
    // A controller that sees one namespace sees part of a global pool's claims: several of them
    // writing what each sees would overwrite each other without end.
    movedOut: ctx.watchNamespace === undefined ? movedOutCondition(input.left) : 'keep',
  });
  const nowMs = ctx.now().getTime();
  const waitMs = changesCountsOnly(scope.pool.status, status) ? ctx.countWrites.waitMs(key, uid, nowMs) : 0;
  const after: IPPool = { ...scope.pool, status };
  // Sent as what this pass knows: its echo wakes no pass (watches.ts, ownWriteEcho).
  if (waitMs === 0) ctx.ownWrites.pools.sending('', key, after);
  const written =
    waitMs > 0
      ? undefined
      : await patchStatusIfChanged({ client: ctx.client, type: poolTypeOf(scope.ref.kind), before: scope.pool, after });
  if (written !== undefined) {
    ctx.countWrites.wrote(key, uid, nowMs);
    ctx.ownWrites.pools.remember('', key, { basedOn: scope.pool.metadata.resourceVersion, written });
  }
  const objectBytes = written === undefined ? undefined : ctx.statusBudget.remember(scope.ref, written);
  recordMetrics(ctx, { scope, plan, counts: status.ipAddresses, objectBytes });
  if (input.blockWrites > 0 && plan.changed) {
    ctx.logger.info('committed allocations', {
      pool: formatPoolRef(scope.ref),
      allocated: plan.newlyAllocated,
      released: plan.released.length,
      recovered: plan.recovered,
      total: plan.allocations.length,
      blocksWritten: input.blockWrites,
    });
  }
  return { pool: written ?? scope.pool, ...(waitMs > 0 ? { countsDueInMs: waitMs } : {}) };
}

/**
 * Counts what a pass committed to its blocks, whatever the pool write does next. Allocations are
 * counted by block: when one block loses a race the others stay written, and the next pass finds
 * their new entries held, not taken. Releases and dropped duplicates are counted once every block
 * is written (a pass that lost a race finds them again).
 */
export function recordCommitted(
  ctx: Pick<IpamContext, 'metrics'>,
  input: { readonly ref: PoolRef; readonly plan: AllocationPlan; readonly commit: BlockCommit },
): void {
  const { ref, plan, commit } = input;
  const metrics = ctx.metrics;
  if (metrics === undefined) return;
  const taken = commit.committed.filter((a) => plan.taken.has(a)).length;
  if (taken > 0) metrics.allocations.inc({ kind: ref.kind }, taken);
  if (commit.kind === 'conflict' || commit.writes === 0) return;
  metrics.releases.inc({ kind: ref.kind }, plan.released.length);
  metrics.duplicatesDropped.inc({ kind: ref.kind }, plan.duplicatesDropped);
}

function recordMetrics(
  ctx: Pick<IpamContext, 'metrics'>,
  outcome: {
    scope: PoolScope;
    plan: AllocationPlan;
    counts: { total: number; used: number; free: number; outOfRange: number } | undefined;
    objectBytes: number | undefined;
  },
): void {
  const metrics = ctx.metrics;
  if (metrics === undefined) return;
  const kind = outcome.scope.ref.kind;
  const labels = { kind, namespace: outcome.scope.ref.namespace ?? '', pool: outcome.scope.ref.name };
  if (outcome.objectBytes !== undefined) metrics.poolObjectBytes.set(labels, outcome.objectBytes);
  const counts = outcome.counts;
  if (counts === undefined) return;
  metrics.poolAddresses.set({ ...labels, state: 'total' }, counts.total);
  metrics.poolAddresses.set({ ...labels, state: 'used' }, counts.used);
  metrics.poolAddresses.set({ ...labels, state: 'free' }, counts.free);
  metrics.poolAddresses.set({ ...labels, state: 'out_of_range' }, counts.outOfRange);
}
