/**
 * Pool usage numbers for `status.ipAddresses`. Computed as bigint (an IPv6 /64 pool holds 2^64
 * addresses) and clamped only when written to status.
 */
import type { AllocationState } from './allocator.js';
import { countRangeAddresses, intersectRanges } from './range.js';

export interface AddressCounts {
  /** Addresses the pool may hand out. */
  readonly total: bigint;
  /** Every held address, in the pool or not (as the reference: one per allocation). */
  readonly used: bigint;
  /** Allocatable addresses nobody holds: total − (used − outOfRange). */
  readonly free: bigint;
  /** Held addresses the pool can no longer hand out (its spec changed under them). */
  readonly outOfRange: bigint;
}

/** The same numbers as plain integers for the status subresource. */
export interface StatusAddressCounts {
  readonly total: number;
  readonly used: number;
  readonly free: number;
  readonly outOfRange: number;
}

/**
 * Counts for a pool. Unlike the reference, whose `free` is `total − used` and so drops below the
 * truth when addresses are out of range, `free` here is exactly the number of addresses a claim
 * could still get.
 */
export function countAddresses(state: AllocationState): AddressCounts {
  const total = countRangeAddresses(state.allocatable);
  const usedSameFamily = countRangeAddresses(state.used);
  const inRange = countRangeAddresses(intersectRanges(state.used, state.allocatable));
  const otherFamily = BigInt(state.otherFamilyCount);
  return {
    total,
    used: usedSameFamily + otherFamily,
    free: total - inRange,
    outOfRange: usedSameFamily - inRange + otherFamily,
  };
}

/**
 * A count as a JSON-safe integer. The reference clamps to Go's MaxInt64; JavaScript numbers are
 * exact only up to 2^53 − 1, and writing a rounded 2^63 would overflow the int64 the API server
 * expects, so counts clamp at Number.MAX_SAFE_INTEGER. Negative input (a bug) clamps to 0.
 */
export function clampCount(count: bigint): number {
  if (count <= 0n) return 0;
  return count > MAX_SAFE ? Number.MAX_SAFE_INTEGER : Number(count);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** `countAddresses` clamped for `status.ipAddresses`. */
export function toStatusCounts(counts: AddressCounts): StatusAddressCounts {
  return {
    total: clampCount(counts.total),
    used: clampCount(counts.used),
    free: clampCount(counts.free),
    outOfRange: clampCount(counts.outOfRange),
  };
}
