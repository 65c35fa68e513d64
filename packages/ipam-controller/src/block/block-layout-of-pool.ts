import type { IPPool } from '@metal-l2/api';
import type { IpamContext } from '../context.js';
import { formatPoolRef, poolIndexKey, poolObjectKey, poolTypeOf, type PoolRef } from '../pool-ref.js';
import { hasLostStatus } from '../pool/pool-ownership.js';
import { extendedHold, reportLostRecords } from '../pool/reuse-hold.js';
import type { BlockLayout } from './block-layout.js';

/**
 * The pool's block layout, as its status records it; chosen once (the controller's --block-size,
 * the pool's namespace or, for a global pool, the controller's) by the first writer, in a write
 * guarded by the pool's resourceVersion, so every replica and every later controller (with
 * another --block-size) cuts the range the same way. A pool that had a layout and lost it with its
 * status (a restore, a move) gets the reuse hold in the same write (reuse-hold.ts). Throws
 * Conflict when another writer won.
 */
export async function ensureBlockLayout(ctx: IpamContext, ref: PoolRef, pool: IPPool): Promise<{ pool: IPPool; layout: BlockLayout }> {
  const recorded = pool.status?.blocks;
  if (recorded !== undefined) return { pool, layout: { size: recorded.size, namespace: recorded.namespace } };
  const layout: BlockLayout = { size: ctx.blocks.size, namespace: ref.namespace ?? ctx.blocks.globalNamespace };
  const lost = hasLostStatus(pool);
  const hold = lost ? extendedHold(pool, ctx.now()) : undefined;
  const written = await ctx.client.patchStatus<IPPool>(
    poolTypeOf(ref.kind),
    poolObjectKey(ref),
    { status: { blocks: layout, ...(hold === undefined ? {} : { reuseHeldUntil: hold }) } },
    pool.metadata.resourceVersion === undefined ? {} : { resourceVersion: pool.metadata.resourceVersion },
  );
  const kept = ctx.ownWrites.pools.remember('', poolIndexKey(ref), { basedOn: pool.metadata.resourceVersion, written });
  if (lost) reportLostRecords(ctx, kept, `${formatPoolRef(ref)} lost its status (a restore or a move)`);
  return { pool: kept, layout };
}
