import { PoolConditionTypes, PoolEventReasons, PoolReasons, type IPPool } from '@metal-l2/api';
import { KubeApiError, patchStatusIfChanged } from '@metal-l2/kube';
import type { IpamContext } from '../context.js';
import { formatPoolRef, poolTypeOf } from '../pool-ref.js';
import type { AllocationPlan } from './allocation-plan.js';
import type { PoolScope } from './pool-scope.js';
import { computePoolStatus, type StatusFull } from './pool-status.js';
import type { StatusBudget } from './status-budget.js';

/**
 * Writes a pass's plan into the pool's status (one merge patch guarded by resourceVersion, nothing
 * when nothing changed) and reports it: log line, metrics, and a Warning Event when the pool
 * object has just reached its size budget. Returns the pool as the server has it after the write
 * (the scope's pool when nothing was written).
 */
export async function commitStatus(
  ctx: IpamContext,
  input: { readonly scope: PoolScope; readonly plan: AllocationPlan; readonly budget: StatusBudget },
): Promise<IPPool> {
  const { scope, plan } = input;
  const full = fullness(ctx, plan);
  const status = computePoolStatus({
    current: scope.pool.status,
    allocations: plan.allocations,
    state: scope.resolved === undefined ? undefined : plan.state,
    blocker: scope.blocker,
    vrf: scope.vrf?.write,
    generation: scope.pool.metadata.generation,
    now: ctx.now(),
    ...(full === undefined ? {} : { full }),
  });
  const written = await patchStatusIfChanged({
    client: ctx.client,
    type: poolTypeOf(scope.ref.kind),
    before: scope.pool,
    after: { ...scope.pool, status },
  });
  // The object as the server stores it now: measured on the server's answer (managedFields included).
  const objectBytes = written === undefined ? input.budget.objectBytes : ctx.statusBudget.remember(scope.ref, written);
  recordMetrics(ctx, { scope, plan, written: written !== undefined, counts: status.ipAddresses, objectBytes });
  if (written !== undefined && plan.changed) {
    ctx.logger.info('committed allocations', {
      pool: formatPoolRef(scope.ref),
      allocated: plan.newlyAllocated,
      released: plan.released.length,
      recovered: plan.recovered,
      total: plan.allocations.length,
      objectBytes,
    });
  }
  const wasFull = scope.pool.status?.conditions?.some((c) => c.type === PoolConditionTypes.ready && c.reason === PoolReasons.statusFull);
  if (written !== undefined && full !== undefined && wasFull !== true) {
    const waiting =
      full.waiting === 0 ? 'new claims will wait for room' : `${full.waiting} claims wait for room although addresses are free`;
    const message = `the pool object reached its ${full.budgetBytes}-byte size budget (${plan.allocations.length} allocations): ${waiting}; releases go on`;
    ctx.events.event(written, { type: 'Warning', reason: PoolEventReasons.statusFull, message });
    ctx.logger.warn('pool status full', {
      pool: formatPoolRef(scope.ref),
      waiting: full.waiting,
      budgetBytes: full.budgetBytes,
      objectBytes,
    });
  }
  return written ?? scope.pool;
}

/** The pool is full when claims wait for room, or when its object is past the budget already. */
function fullness(ctx: Pick<IpamContext, 'statusBudget'>, plan: AllocationPlan): StatusFull | undefined {
  const budgetBytes = ctx.statusBudget.budgetBytes;
  const projectedBytes = plan.projectedBytes ?? 0;
  if (plan.waitingForRoom === 0 && projectedBytes <= budgetBytes) return undefined;
  return { projectedBytes, budgetBytes, waiting: plan.waitingForRoom };
}

/** etcd's answer to an object past its request limit, passed on by the API server. */
export function isTooLarge(err: unknown): boolean {
  return err instanceof KubeApiError && /request is too large|too large/i.test(err.message);
}

function recordMetrics(
  ctx: Pick<IpamContext, 'metrics'>,
  outcome: {
    scope: PoolScope;
    plan: AllocationPlan;
    written: boolean;
    counts: { total: number; used: number; free: number; outOfRange: number } | undefined;
    objectBytes: number;
  },
): void {
  const metrics = ctx.metrics;
  if (metrics === undefined) return;
  const kind = outcome.scope.ref.kind;
  if (outcome.written) {
    metrics.allocations.inc({ kind }, outcome.plan.newlyAllocated);
    metrics.releases.inc({ kind }, outcome.plan.released.length);
  }
  const labels = { kind, namespace: outcome.scope.ref.namespace ?? '', pool: outcome.scope.ref.name };
  metrics.poolObjectBytes.set(labels, outcome.objectBytes);
  metrics.claimsWaitingForRoom.set(labels, outcome.plan.waitingForRoom);
  const counts = outcome.counts;
  if (counts === undefined) return;
  metrics.poolAddresses.set({ ...labels, state: 'total' }, counts.total);
  metrics.poolAddresses.set({ ...labels, state: 'used' }, counts.used);
  metrics.poolAddresses.set({ ...labels, state: 'free' }, counts.free);
  metrics.poolAddresses.set({ ...labels, state: 'out_of_range' }, counts.outOfRange);
}
