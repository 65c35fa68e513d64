import { IpamFinalizers, type IPPool } from '@metal-l2/api';
import { isNotFound } from '@metal-l2/kube';
import type { IpamContext } from '../context.js';
import { deleteVrfResources } from '../vrf/index.js';
import type { AllocationPlan } from './allocation-plan.js';
import { poolObjectKey, poolTypeOf } from '../pool-ref.js';
import type { PoolScope } from './pool-scope.js';
import { report } from './pool-vrf.js';

/**
 * The pool finalizer's work, once no address is held (released ones included): the Metal
 * resources this pool created go first, then the finalizer. Returns when to come back while Metal
 * still has something to delete.
 */
export async function finishPoolDeletion(
  ctx: IpamContext,
  input: { readonly scope: PoolScope; readonly plan: AllocationPlan; readonly pool: IPPool },
): Promise<number | undefined> {
  const { scope, plan } = input;
  if (scope.pool.metadata.deletionTimestamp === undefined || plan.allocations.length > 0) return undefined;
  const finalizers = input.pool.metadata.finalizers ?? [];
  if (!finalizers.includes(IpamFinalizers.protectPool)) return undefined;
  const deletion = await deleteVrfResources(ctx, { ref: scope.ref, pool: input.pool });
  report(ctx, { ref: scope.ref, pool: deletion.pool, events: deletion.events });
  if (deletion.kind === 'waiting') return deletion.requeueAfterMs;
  const latest = deletion.pool.metadata.finalizers ?? finalizers;
  try {
    await ctx.client.patch(poolTypeOf(scope.ref.kind), poolObjectKey(scope.ref), {
      metadata: { finalizers: latest.filter((f) => f !== IpamFinalizers.protectPool) },
    });
  } catch (err: unknown) {
    if (!isNotFound(err)) throw err;
  }
  return undefined;
}
