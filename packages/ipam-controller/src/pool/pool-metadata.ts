import { IpamFinalizers, type IPPool } from '@metal-l2/api';
import { finalizersWith } from '@metal-l2/kube';
import type { IpamContext } from '../context.js';
import { poolIndexKey, poolObjectKey, poolTypeOf, type PoolRef } from '../pool-ref.js';
import { stampPatch } from './pool-ownership.js';

/**
 * The pool's finalizer and, once its block layout is recorded, the stamp of the management
 * cluster that allocates from it (pool-ownership.ts), in one metadata patch guarded by the pool's
 * resourceVersion. Returns the pool as written, so the status write that follows is guarded by its
 * new version. A deleting pool is not stamped (it allocates nothing any more).
 */
export async function ensurePoolMetadata(
  ctx: Pick<IpamContext, 'client' | 'ownWrites' | 'managementCluster'>,
  ref: PoolRef,
  pool: IPPool,
): Promise<IPPool> {
  const deleting = pool.metadata.deletionTimestamp !== undefined;
  const finalizers = deleting ? undefined : finalizersWith(pool, IpamFinalizers.protectPool);
  const stamp = deleting ? undefined : stampPatch(ref, pool, ctx.managementCluster);
  if (finalizers === undefined && stamp === undefined) return pool;
  const written = await ctx.client.patch<IPPool>(
    poolTypeOf(ref.kind),
    poolObjectKey(ref),
    {
      metadata: {
        ...(finalizers === undefined ? {} : { finalizers }),
        ...(stamp === undefined ? {} : { annotations: stamp }),
      },
    },
    { ...(pool.metadata.resourceVersion === undefined ? {} : { resourceVersion: pool.metadata.resourceVersion }) },
  );
  return ctx.ownWrites.pools.remember('', poolIndexKey(ref), { basedOn: pool.metadata.resourceVersion, written });
}
