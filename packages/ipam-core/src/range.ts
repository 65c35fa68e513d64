/**
 * Inclusive address ranges and sets of them. A `RangeSet` is the one representation for pools,
 * exclusions and used addresses: sorted, disjoint and never adjacent (adjacent runs are merged), so
 * set operations are linear merges and membership is a binary search. Sizes are bigint because an
 * IPv6 pool can hold 2^128 addresses.
 */
import { addressBits, formatAddress, maxAddressValue } from './address.js';
import type { Address, IPFamily } from './address.js';

/** `start..end`, both included, `start <= end`. */
export interface AddressRange {
  readonly start: bigint;
  readonly end: bigint;
}

/** Sorted, disjoint, non-adjacent ranges. Build one with `normalizeRanges` or `rangesFromValues`. */
export type RangeSet = readonly AddressRange[];

const compareBigInt = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

/** Sorts and merges ranges that overlap or touch. Accepts any list of valid ranges. */
export function normalizeRanges(ranges: readonly AddressRange[]): RangeSet {
  const sorted = [...ranges].sort((a, b) => compareBigInt(a.start, b.start));
  const out: AddressRange[] = [];
  for (const range of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && range.start <= last.end + 1n) {
      if (range.end > last.end) {
        out[out.length - 1] = { start: last.start, end: range.end };
      }
    } else {
      out.push(range);
    }
  }
  return out;
}

/**
 * Collapses single addresses into runs: [5, 1, 2, 3, 9] → 1-3, 5, 9. Duplicates are harmless.
 * This is how a pool's used addresses become a RangeSet: a pool filled from the bottom is one run,
 * whatever its size.
 */
export function rangesFromValues(values: Iterable<bigint>): RangeSet {
  const sorted = [...values].sort(compareBigInt);
  const out: AddressRange[] = [];
  let start: bigint | undefined;
  let end = 0n;
  for (const value of sorted) {
    if (start !== undefined && value <= end + 1n) {
      if (value > end) end = value;
      continue;
    }
    if (start !== undefined) out.push({ start, end });
    start = value;
    end = value;
  }
  if (start !== undefined) out.push({ start, end });
  return out;
}

/** a ∪ b for normalised sets, in linear time. */
export function unionRanges(a: RangeSet, b: RangeSet): RangeSet {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out: AddressRange[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    let next: AddressRange;
    if (y === undefined || (x !== undefined && x.start <= y.start)) {
      next = x as AddressRange;
      i++;
    } else {
      next = y;
      j++;
    }
    const last = out[out.length - 1];
    if (last !== undefined && next.start <= last.end + 1n) {
      if (next.end > last.end) out[out.length - 1] = { start: last.start, end: next.end };
    } else {
      out.push(next);
    }
  }
  return out;
}

/** a ∖ b for normalised sets, in linear time. */
export function subtractRanges(a: RangeSet, b: RangeSet): RangeSet {
  if (a.length === 0 || b.length === 0) return a;
  const out: AddressRange[] = [];
  let j = 0;
  for (const range of a) {
    let start = range.start;
    // Skip removals that end before this range; they cannot affect later ranges either.
    while (j < b.length && (b[j] as AddressRange).end < start) j++;
    let k = j;
    let removed = b[k];
    while (removed !== undefined && removed.start <= range.end) {
      if (removed.start > start) out.push({ start, end: removed.start - 1n });
      if (removed.end >= range.end) {
        start = range.end + 1n;
        break;
      }
      start = removed.end + 1n;
      k++;
      removed = b[k];
    }
    if (start <= range.end) out.push({ start, end: range.end });
  }
  return out;
}

/** a ∩ b for normalised sets, in linear time. */
export function intersectRanges(a: RangeSet, b: RangeSet): RangeSet {
  const out: AddressRange[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as AddressRange;
    const y = b[j] as AddressRange;
    const start = x.start > y.start ? x.start : y.start;
    const end = x.end < y.end ? x.end : y.end;
    if (start <= end) out.push({ start, end });
    if (x.end < y.end) i++;
    else j++;
  }
  return out;
}

/** Whether the sets share at least one address, without building the intersection. */
export function rangesOverlap(a: RangeSet, b: RangeSet): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as AddressRange;
    const y = b[j] as AddressRange;
    if (x.start <= y.end && y.start <= x.end) return true;
    if (x.end < y.end) i++;
    else j++;
  }
  return false;
}

/**
 * Index of the first range whose end is >= value, or `set.length` when none is. Binary search,
 * optionally starting at `from` (callers walking upwards pass their current index).
 */
export function lowerBoundRange(set: RangeSet, value: bigint, from = 0): number {
  let lo = from;
  let hi = set.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((set[mid] as AddressRange).end < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Whether `value` lies in the set. O(log n). */
export function rangesContain(set: RangeSet, value: bigint): boolean {
  const range = set[lowerBoundRange(set, value)];
  return range !== undefined && range.start <= value;
}

/** Whether every address of `range` lies in the set. O(log n). */
export function rangesContainRange(set: RangeSet, range: AddressRange): boolean {
  const found = set[lowerBoundRange(set, range.start)];
  return found !== undefined && found.start <= range.start && found.end >= range.end;
}

/** Number of addresses in the set. */
export function countRangeAddresses(set: RangeSet): bigint {
  let total = 0n;
  for (const range of set) total += range.end - range.start + 1n;
  return total;
}

/**
 * The whole prefix an address belongs to: `10.0.0.77`/24 → 10.0.0.0-10.0.0.255. Throws for a
 * prefix outside 0..bits (callers validate first; a wrong prefix here is a programming error).
 */
export function rangeOfPrefix(address: Address, prefix: number): AddressRange {
  const bits = addressBits(address.family);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) {
    throw new RangeError(`prefix ${prefix} is not valid for an IPv${address.family} address`);
  }
  const hostBits = BigInt(bits - prefix);
  const hostMask = (1n << hostBits) - 1n;
  const start = address.value & ~hostMask & maxAddressValue(address.family);
  return { start, end: start | hostMask };
}

/** `10.0.0.5` for a single address, `10.0.0.5-10.0.0.9` otherwise (the pool spec's range syntax). */
export function formatRange(family: IPFamily, range: AddressRange): string {
  const start = formatAddress({ family, value: range.start });
  if (range.start === range.end) return start;
  return `${start}-${formatAddress({ family, value: range.end })}`;
}

/** Every range of the set in pool spec syntax, for messages. */
export function formatRanges(family: IPFamily, set: RangeSet): string[] {
  return set.map((range) => formatRange(family, range));
}
