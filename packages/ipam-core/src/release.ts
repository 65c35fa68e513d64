/**
 * Releasing addresses with `addressReuseGracePeriodSeconds`: a released address stays in status,
 * marked with `releasedAt`, and is not handed out again until `now >= releasedAt + grace`. This
 * avoids the ARP / switch black-holing of the reference provider's immediate reuse (issue #332).
 * Time is a parameter (`now`), never read from a clock.
 */
import { isSameClaim } from './allocation.js';
import type { Allocation, ClaimRef } from './allocation.js';

export interface GracePeriodOptions {
  readonly now: Date;
  /** The pool's `addressReuseGracePeriodSeconds`; 0 (or a pool being deleted) releases at once. */
  readonly gracePeriodSeconds: number;
}

export interface ExpireResult {
  /** Allocations still held: active ones and those within their grace period. */
  readonly allocations: readonly Allocation[];
  /** Allocations whose grace period is over: their addresses are free again. */
  readonly expired: readonly Allocation[];
  /** Milliseconds until the next held release expires, for a requeue; absent when none is held. */
  readonly nextExpiryInMs?: number | undefined;
}

/**
 * Releases every allocation of the given claims: with a grace period the entry stays and gets
 * `releasedAt` (an entry already released keeps its first `releasedAt`, so repeated reconciles do
 * not extend the wait); without one it is removed.
 */
export function releaseClaims(allocations: readonly Allocation[], claims: readonly ClaimRef[], options: GracePeriodOptions): Allocation[] {
  const releasedAt = formatReleaseTimestamp(options.now);
  const out: Allocation[] = [];
  for (const allocation of allocations) {
    if (!claims.some((claim) => isSameClaim(claim, allocation.claim))) {
      out.push(allocation);
    } else if (options.gracePeriodSeconds > 0) {
      out.push(allocation.releasedAt === undefined ? { ...allocation, releasedAt } : allocation);
    }
  }
  return out;
}

/**
 * Drops released allocations whose grace period is over, and says when the next one will be, so
 * the pool reconciler can requeue instead of polling.
 */
export function expireReleased(allocations: readonly Allocation[], options: GracePeriodOptions): ExpireResult {
  const kept: Allocation[] = [];
  const expired: Allocation[] = [];
  let nextExpiryInMs: number | undefined;
  for (const allocation of allocations) {
    const reusableAtMs = reusableAt(allocation, options.gracePeriodSeconds);
    if (reusableAtMs === undefined) {
      kept.push(allocation);
    } else if (options.now.getTime() >= reusableAtMs) {
      expired.push(allocation);
    } else {
      kept.push(allocation);
      const waitMs = reusableAtMs - options.now.getTime();
      nextExpiryInMs = nextExpiryInMs === undefined ? waitMs : Math.min(nextExpiryInMs, waitMs);
    }
  }
  return { allocations: kept, expired, nextExpiryInMs };
}

/** Whether the allocation's address may be handed out again at `now`. Active allocations never. */
export function isReusable(allocation: Allocation, options: GracePeriodOptions): boolean {
  const at = reusableAt(allocation, options.gracePeriodSeconds);
  return at !== undefined && options.now.getTime() >= at;
}

/**
 * RFC 3339 UTC with second precision (`2025-01-02T03:04:05Z`), rounded up to the next whole
 * second so that the stored time is never earlier than the real release and the grace period is
 * never cut short.
 */
export function formatReleaseTimestamp(now: Date): string {
  const seconds = Math.ceil(now.getTime() / 1000);
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}

function reusableAt(allocation: Allocation, gracePeriodSeconds: number): number | undefined {
  if (allocation.releasedAt === undefined) return undefined;
  const releasedAtMs = Date.parse(allocation.releasedAt);
  if (Number.isNaN(releasedAtMs)) {
    // decodeAllocations only yields valid timestamps; anything else was built wrongly in code.
    throw new RangeError(`allocation of ${allocation.address} has an invalid releasedAt ${JSON.stringify(allocation.releasedAt)}`);
  }
  return releasedAtMs + Math.max(0, gracePeriodSeconds) * 1000;
}
