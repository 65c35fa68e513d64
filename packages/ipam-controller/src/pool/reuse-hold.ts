import { IPAddressBlockType, IpamLabels, PoolReasons, type IPAddressBlock, type IPPool } from '@metal-l2/api';
import { formatReleaseTimestamp } from '@metal-l2/ipam-core';
import type { IpamContext } from '../context.js';
import { formatPoolRef, poolIndexKey, poolObjectKey, poolTypeOf, type PoolRef } from '../pool-ref.js';
import type { BlockLayout } from '../block/block-layout.js';
import type { BlockSet } from '../block/block-store.js';
import type { PoolBlocker } from './pool-status.js';

// addressReuseGracePeriodSeconds keeps a released address out of reach for a while; the record of
// that wait is the address's `@releasedAt` entry in its IPAddressBlock, which no IPAddress backs
// any more. When those records are lost, the rebuild from IPAddresses cannot bring them back:
// - a pool restored, or moved, without its status (it carries our stamp but no block layout:
//   pool-ownership.ts hasLostStatus), whose blocks are gone or came back empty;
// - an IPAddressBlock deleted (the pool's status.blocks.count says how many it had; blocks are
//   never deleted while their pool lives), seen however late: by a controller that was not
//   running when it went, too.
// Which addresses were in grace is not known then, so none is handed out until a whole grace
// period has passed since the loss was noticed (status.reuseHeldUntil, written before anything
// else, so a restart keeps it). Live claims keep being served, their allocations rebuilt from
// their IPAddresses. A pool without a grace period holds nothing.

/** The hold to record on noticing a loss now: a grace period from now, or the later one the pool has. */
export function extendedHold(pool: IPPool, now: Date): string | undefined {
  const graceSeconds = pool.spec.addressReuseGracePeriodSeconds ?? 0;
  if (graceSeconds <= 0) return undefined;
  const until = formatReleaseTimestamp(new Date(now.getTime() + graceSeconds * 1000));
  const current = pool.status?.reuseHeldUntil;
  return current !== undefined && Date.parse(current) > Date.parse(until) ? current : until;
}

/** Why nothing is handed out while the hold lasts; undefined once it is over (or there is none). */
export function reuseHoldBlocker(pool: IPPool, now: Date): PoolBlocker | undefined {
  const until = pool.status?.reuseHeldUntil;
  if (until === undefined) return undefined;
  const untilMs = Date.parse(until);
  if (Number.isNaN(untilMs) || untilMs <= now.getTime()) return undefined;
  return {
    reason: PoolReasons.allocationRecordsLost,
    untilMs,
    message:
      'the records of released addresses were lost (a restore or a move without status, or a deleted IPAddressBlock), ' +
      `so any free address may still be in its reuse grace period (addressReuseGracePeriodSeconds: ` +
      `${pool.spec.addressReuseGracePeriodSeconds ?? 0}): none is handed out before ${until}; ` +
      'addresses of live claims are rebuilt from their IPAddresses and served',
  };
}

/** Says, once, that records were lost and what the pool does about it. */
export function reportLostRecords(ctx: Pick<IpamContext, 'events' | 'logger'>, pool: IPPool, what: string): void {
  const until = pool.status?.reuseHeldUntil;
  const message = `${what}; ${until === undefined ? 'no reuse grace period to keep' : `no address is handed out before ${until}`}`;
  ctx.logger.warn('allocation records lost', { pool: pool.metadata.name, message });
  ctx.events.event(pool, { type: 'Warning', reason: PoolReasons.allocationRecordsLost, message });
}

/**
 * Compares the pool's blocks with the count its status recorded. Fewer in the cache is confirmed
 * with a live list (the cache may lag); fewer there too means a block was deleted: the count is
 * brought down and the hold recorded, in one write guarded by the pool's resourceVersion (a
 * Conflict is thrown for the caller to read again). Returns the pool and blocks to go on with.
 */
export async function checkBlockCount(
  ctx: IpamContext,
  input: { readonly ref: PoolRef; readonly pool: IPPool; readonly layout: BlockLayout; readonly blocks: BlockSet },
): Promise<{ readonly pool: IPPool; readonly blocks: BlockSet }> {
  const { ref, pool, layout } = input;
  const recorded = pool.status?.blocks?.count;
  // A deleting pool hands nothing out again, and a foreground deletion takes its blocks first.
  if (recorded === undefined || input.blocks.size >= recorded || pool.metadata.deletionTimestamp !== undefined) return input;
  const uid = pool.metadata.uid ?? '';
  const live = await ctx.client.list<IPAddressBlock>(IPAddressBlockType, {
    namespace: layout.namespace,
    labelSelector: `${IpamLabels.poolUid}=${uid}`,
  });
  const blocks = new Map(live.items.map((b) => [b.metadata.name ?? '', b]));
  if (blocks.size >= recorded) return { pool, blocks };
  const hold = extendedHold(pool, ctx.now());
  const written = await ctx.client.patchStatus<IPPool>(
    poolTypeOf(ref.kind),
    poolObjectKey(ref),
    { status: { blocks: { ...pool.status?.blocks, count: blocks.size }, ...(hold === undefined ? {} : { reuseHeldUntil: hold }) } },
    pool.metadata.resourceVersion === undefined ? {} : { resourceVersion: pool.metadata.resourceVersion },
  );
  const kept = ctx.ownWrites.pools.remember('', poolIndexKey(ref), { basedOn: pool.metadata.resourceVersion, written });
  reportLostRecords(ctx, kept, `${recorded - blocks.size} of the ${recorded} IPAddressBlocks of ${formatPoolRef(ref)} were deleted`);
  return { pool: kept, blocks };
}
