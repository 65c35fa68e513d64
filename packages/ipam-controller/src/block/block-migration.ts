import { type IPPool } from '@metal-l2/api';
import { decodeAllocations, type Allocation } from '@metal-l2/ipam-core';
import { isConflict } from '@metal-l2/kube';
import type { IpamContext } from '../context.js';
import { formatPoolRef, poolObjectKey, poolTypeOf, type PoolRef } from '../pool-ref.js';
import type { BlockLayout } from './block-layout.js';
import { allocationsOfBlocks, commitBlocks, type BlockSet } from './block-store.js';

// A pool written before blocks keeps its allocations in its own status.allocations. They move
// into blocks with no downtime and nothing lost or moved: every entry is written into the block
// that owns its address first, and only then is the pool's copy dropped, in a write guarded by
// the pool version the entries were read from. A writer that added an entry meanwhile makes that
// write fail; the next attempt carries its entry over too.

export type Migration =
  | { readonly kind: 'none' }
  | { readonly kind: 'migrated'; readonly pool: IPPool; readonly blocks: BlockSet }
  /** A block or the pool changed under us: start over from these. */
  | { readonly kind: 'conflict'; readonly pool: IPPool | undefined; readonly blocks: BlockSet };

export function hasLegacyAllocations(pool: IPPool): boolean {
  return pool.status?.allocations !== undefined;
}

export async function migrateLegacyAllocations(
  ctx: IpamContext,
  input: { readonly ref: PoolRef; readonly pool: IPPool; readonly layout: BlockLayout; readonly blocks: BlockSet },
): Promise<Migration> {
  const { ref, pool } = input;
  if (!hasLegacyAllocations(pool)) return { kind: 'none' };
  const legacy = decodeAllocations(pool.status?.allocations ?? {}).allocations;
  const inBlocks = allocationsOfBlocks(input.blocks);
  const held = new Map(inBlocks.map((a) => [a.address, a]));
  const merged: Allocation[] = [...inBlocks];
  for (const entry of legacy) {
    const holder = held.get(entry.address);
    if (holder === undefined) merged.push(entry);
    else if (holder.claim.name !== entry.claim.name || holder.claim.namespace !== entry.claim.namespace) {
      ctx.logger.warn('address held by another claim in its block than in the pool status; the block is kept', {
        pool: formatPoolRef(ref),
        address: entry.address,
      });
    }
  }
  const commit = await commitBlocks(ctx, { ref, pool, layout: input.layout, blocks: input.blocks, allocations: merged });
  if (commit.kind === 'conflict') return { kind: 'conflict', pool, blocks: commit.blocks };
  try {
    const written = await ctx.client.patchStatus<IPPool>(
      poolTypeOf(ref.kind),
      poolObjectKey(ref),
      { status: { allocations: null } },
      pool.metadata.resourceVersion === undefined ? {} : { resourceVersion: pool.metadata.resourceVersion },
    );
    ctx.logger.info('moved the pool’s allocations into blocks', { pool: formatPoolRef(ref), allocations: legacy.length });
    return { kind: 'migrated', pool: written, blocks: commit.blocks };
  } catch (err: unknown) {
    if (!isConflict(err)) throw err;
    return { kind: 'conflict', pool: await ctx.client.get<IPPool>(poolTypeOf(ref.kind), poolObjectKey(ref)), blocks: commit.blocks };
  }
}
