import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { parseAddress } from './address.js';
import { allocate, createAllocationState } from './allocator.js';
import { clampCount, countAddresses, toStatusCounts } from './counts.js';
import { resolvePoolSpec } from './pool-spec.js';
import type { PoolSpec } from './pool-spec.js';
import { countRangeAddresses, normalizeRanges, rangeOfPrefix } from './range.js';

function countsFor(spec: PoolSpec, used: readonly string[]) {
  const result = resolvePoolSpec(spec);
  if (!result.ok) throw new Error('invalid test pool');
  const state = createAllocationState({
    family: result.pool.family,
    allocatable: result.pool.allocatable,
    used: used.map((text) => parseAddress(text)!),
  });
  return toStatusCounts(countAddresses(state));
}

describe('countAddresses', () => {
  test.each([
    {
      name: 'checklist 24: gateway inside the range is not counted',
      spec: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 24, gateway: '10.0.0.10' },
      used: ['10.0.0.11', '10.0.0.12'],
      want: { total: 10, used: 2, free: 8, outOfRange: 0 },
    },
    {
      name: 'checklist 24: gateway outside the range',
      spec: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 24, gateway: '10.0.0.1' },
      used: [],
      want: { total: 11, used: 0, free: 11, outOfRange: 0 },
    },
    {
      name: 'out of range allocations count as used and out of range, not against free',
      spec: { addresses: ['10.0.0.15-10.0.0.20'], prefix: 24, gateway: '10.0.0.1' },
      used: ['10.0.0.10', '10.0.0.15', '::a00:f'],
      want: { total: 6, used: 3, free: 5, outOfRange: 2 },
    },
    {
      name: 'reference IPSetCount: overlapping ranges are counted once',
      spec: { addresses: ['192.168.1.1-192.168.1.10', '192.168.1.5-192.168.1.15'], prefix: 24, allocateReservedIPAddresses: true },
      used: [],
      want: { total: 15, used: 0, free: 15, outOfRange: 0 },
    },
    {
      name: 'reference IPSetCount: IPv6 /126',
      spec: { addresses: ['fe80::1/126'], prefix: 64, allocateReservedIPAddresses: true },
      used: [],
      want: { total: 4, used: 0, free: 4, outOfRange: 0 },
    },
    {
      name: 'reference IPSetCount: IPv6 /65 is larger than a safe integer',
      spec: { addresses: ['fe80::1/65'], prefix: 64, allocateReservedIPAddresses: true },
      used: ['fe80::1'],
      want: { total: Number.MAX_SAFE_INTEGER, used: 1, free: Number.MAX_SAFE_INTEGER, outOfRange: 0 },
    },
    {
      name: 'reference IPSetCount: IPv6 /20 is larger than uint64',
      spec: { addresses: ['fe80::1/20'], prefix: 20, allocateReservedIPAddresses: true },
      used: [],
      want: { total: Number.MAX_SAFE_INTEGER, used: 0, free: Number.MAX_SAFE_INTEGER, outOfRange: 0 },
    },
  ])('$name', ({ spec, used, want }) => {
    expect(countsFor(spec, used)).toEqual(want);
  });

  test('an IPv6 /64 is counted exactly as bigint before clamping', () => {
    const result = resolvePoolSpec({ addresses: ['2001:db8::/64'], prefix: 64, gateway: '2001:db8::1' });
    if (!result.ok) throw new Error('invalid test pool');
    const state = createAllocationState({ family: 6, allocatable: result.pool.allocatable, used: [] });
    const { state: after } = allocate(state, [{}, {}, {}]);
    // 2^64 minus the anycast address and the gateway, minus three allocations.
    expect(countAddresses(after)).toEqual({ total: 2n ** 64n - 2n, used: 3n, free: 2n ** 64n - 5n, outOfRange: 0n });
  });
});

describe('clampCount', () => {
  test.each([
    { name: 'zero', input: 0n, want: 0 },
    { name: 'small', input: 42n, want: 42 },
    { name: 'largest safe integer', input: 2n ** 53n - 1n, want: Number.MAX_SAFE_INTEGER },
    { name: 'just above', input: 2n ** 53n, want: Number.MAX_SAFE_INTEGER },
    { name: 'an IPv6 /0', input: 2n ** 128n, want: Number.MAX_SAFE_INTEGER },
    { name: 'negative is a bug, clamped to 0', input: -5n, want: 0 },
  ])('$name', ({ input, want }) => {
    expect(clampCount(input)).toBe(want);
  });

  test('property: counts of huge IPv6 ranges clamp to safe integers and stay ordered', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 128 }), fc.bigInt({ min: 0n, max: 2n ** 128n - 1n }), (prefix, value) => {
        const size = countRangeAddresses(normalizeRanges([rangeOfPrefix({ family: 6, value }, prefix)]));
        const clamped = clampCount(size);
        expect(Number.isSafeInteger(clamped)).toBe(true);
        expect(clamped).toBe(size > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(size));
        expect(clampCount(size + 1n)).toBeGreaterThanOrEqual(clamped);
      }),
    );
  });
});
