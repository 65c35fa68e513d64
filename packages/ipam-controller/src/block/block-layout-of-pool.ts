import type { IPPool } from '@metal-l2/api';
import type { IpamContext } from '../context.js';
import { poolIndexKey, poolObjectKey, poolTypeOf, type PoolRef } from '../pool-ref.js';
import type { BlockLayout } from './block-layout.js';

/**
 * The pool's block layout, as its status records it; chosen once (the controller's --block-size,
 * the pool's namespace or, for a global pool, the controller's) by the first writer, in a write
 * guarded by the pool's resourceVersion, so every replica and every later controller (with
 * another --block-size) cuts the range the same way. Throws Conflict when another writer won.
 */
export async function ensureBlockLayout(ctx: IpamContext, ref: PoolRef, pool: IPPool): Promise<{ pool: IPPool; layout: BlockLayout }> {
  const recorded = pool.status?.blocks;
  if (recorded !== undefined) return { pool, layout: { size: recorded.size, namespace: recorded.namespace } };
  const layout: BlockLayout = { size: ctx.blocks.size, namespace: ref.namespace ?? ctx.blocks.globalNamespace };
  const written = await ctx.client.patchStatus<IPPool>(
    poolTypeOf(ref.kind),
    poolObjectKey(ref),
    { status: { blocks: layout } },
    pool.metadata.resourceVersion === undefined ? {} : { resourceVersion: pool.metadata.resourceVersion },
  );
  return { pool: ctx.ownWrites.pools.remember(poolIndexKey(ref), '', { basedOn: pool.metadata.resourceVersion, written }), layout };
}
