import type { IPPool } from '@metal-l2/api';
import { decodeAllocations, type Allocation } from '@metal-l2/ipam-core';
import type { IpamContext } from '../context.js';
import { allocationsOfBlocks, cachedBlocks } from './block-store.js';

/**
 * Everything a pool holds as the caches see it: its blocks' allocations and, for a pool not yet
 * moved to blocks, its status's (an address is in one or the other while it moves; blocks win).
 */
export function poolAllocations(ctx: Pick<IpamContext, 'caches' | 'ownWrites'>, pool: IPPool): Allocation[] {
  const inBlocks = allocationsOfBlocks(cachedBlocks(ctx, pool));
  if (pool.status?.allocations === undefined) return inBlocks;
  const held = new Set(inBlocks.map((a) => a.address));
  return [...inBlocks, ...decodeAllocations(pool.status.allocations).allocations.filter((a) => !held.has(a.address))];
}
