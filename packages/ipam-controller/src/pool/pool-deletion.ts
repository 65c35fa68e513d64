import { IpamFinalizers, type IPPool } from '@metal-l2/api';
import { done, finalizersWithout, hasFinalizer, isNotFound, requeueAfter, writeFinalizers, type ReconcileResult } from '@metal-l2/kube';
import type { ClaimView } from '../claim/claim-contract.js';
import type { IpamContext } from '../context.js';
import { deleteVrfResources, reservedAddressesOf } from '../vrf/index.js';
import { commitPoolPass } from './pool-pass.js';
import { poolTypeOf, type PoolRef } from '../pool-ref.js';
import type { VrfView } from './pool-scope.js';
import { report } from './pool-vrf.js';

/**
 * A deleting pool, start to end. It allocates nothing (its Ready condition says Deleting) and
 * releases at once, without the reuse grace period: nobody will be handed an address from it
 * again. status.vrf is kept as it is: the record of what it created in Metal is what deletion
 * works from. Once no address is held (released ones included), the Metal resources it created go,
 * then its finalizer.
 */
export async function reconcileDeletingPool(
  ctx: IpamContext,
  input: { readonly ref: PoolRef; readonly pool: IPPool; readonly claims: readonly ClaimView[] },
): Promise<ReconcileResult> {
  const { ref, claims } = input;
  const pass = await commitPoolPass(ctx, {
    ref,
    pool: input.pool,
    claims,
    vrf: keptVrfView(input.pool, 'pool is being deleted'),
    gracePeriodSeconds: 0,
  });
  // A deleting pool never stops deleting, so 'deleting' cannot come back from a deletion pass.
  if (pass.kind !== 'committed') return done();
  // Addresses still held: their claims' deletions wake the pool again.
  if (pass.plan.allocations.length > 0) return pass.plan.nextExpiryInMs === undefined ? done() : requeueAfter(pass.plan.nextExpiryInMs);
  const retryMs = await finishPoolDeletion(ctx, { ref, pool: pass.written });
  return retryMs === undefined ? done() : requeueAfter(retryMs);
}

/**
 * The Metal side of a pool whose Metal resources are left alone (deleting, or a copy of another
 * management cluster's): VRFReady and status.vrf stay as they are; the Metal Gateway's address
 * stays out of reach. `why`: what the pool says while its spec.vrf is not brought to match.
 */
export function keptVrfView(pool: IPPool, why: string): VrfView | undefined {
  const recorded = pool.status?.vrf;
  if (pool.spec.vrf === undefined) {
    // A pool whose spec.vrf was removed keeps the record of what it created, so that nobody loses track of it.
    if ((recorded?.created ?? []).length === 0) return undefined;
    return { write: 'keep', ready: true, message: '', reservedAddresses: reservedAddressesOf(recorded) };
  }
  return { write: 'keep', ready: false, message: why, reservedAddresses: reservedAddressesOf(recorded) };
}

/**
 * The pool finalizer's work, once no address is held: the Metal resources this pool created go
 * first, then the finalizer. Returns when to come back while Metal still has something to delete.
 */
async function finishPoolDeletion(ctx: IpamContext, input: { readonly ref: PoolRef; readonly pool: IPPool }): Promise<number | undefined> {
  const { ref } = input;
  if (!hasFinalizer(input.pool, IpamFinalizers.protectPool)) return undefined;
  const deletion = await deleteVrfResources(ctx, { ref, pool: input.pool });
  report(ctx, { ref, pool: deletion.pool, events: deletion.events });
  if (deletion.kind === 'waiting') return deletion.requeueAfterMs;
  // The list as the deletion last wrote it; any change since is not ours to keep.
  const latest = deletion.pool.metadata.finalizers === undefined ? input.pool : deletion.pool;
  const finalizers = finalizersWithout(latest, IpamFinalizers.protectPool);
  try {
    if (finalizers !== undefined)
      await writeFinalizers(ctx.client, { type: poolTypeOf(ref.kind), object: latest, finalizers, guarded: false });
  } catch (err: unknown) {
    if (!isNotFound(err)) throw err;
  }
  return undefined;
}
