import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { findPoolOverlap, overlapIssue, poolsOverlap } from './overlap.js';
import { resolvePoolSpec } from './pool-spec.js';
import type { PoolSpec, ResolvedPool } from './pool-spec.js';
import { formatRanges, rangesContain } from './range.js';

function resolve(spec: PoolSpec): ResolvedPool {
  const result = resolvePoolSpec(spec);
  if (!result.ok) throw new Error('invalid test pool');
  return result.pool;
}

describe('findPoolOverlap', () => {
  test.each<{ name: string; a: PoolSpec; b: PoolSpec; want: string[] }>([
    {
      name: 'same range',
      a: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 24 },
      b: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 24 },
      want: ['10.0.0.10-10.0.0.20'],
    },
    {
      name: 'partial overlap',
      a: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 24 },
      b: { addresses: ['10.0.0.15-10.0.0.30'], prefix: 24 },
      want: ['10.0.0.15-10.0.0.20'],
    },
    {
      name: 'one subnet split into two pools with a shared gateway: no overlap',
      a: { addresses: ['10.0.0.10-10.0.0.50'], prefix: 24, gateway: '10.0.0.1' },
      b: { addresses: ['10.0.0.100-10.0.0.150'], prefix: 24, gateway: '10.0.0.1' },
      want: [],
    },
    {
      name: "one pool could hand out the other's gateway",
      a: { addresses: ['10.0.0.0/24'], prefix: 24, gateway: '10.0.0.1', excludedAddresses: ['10.0.0.100-10.0.0.150'] },
      b: { addresses: ['10.0.0.100-10.0.0.150'], prefix: 24, gateway: '10.0.0.254' },
      want: ['10.0.0.254'],
    },
    {
      name: 'overlap only in excluded addresses is no overlap',
      a: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 24, excludedAddresses: ['10.0.0.15-10.0.0.20'] },
      b: { addresses: ['10.0.0.15-10.0.0.30'], prefix: 24 },
      want: [],
    },
    {
      name: 'different families never overlap',
      a: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 24 },
      b: { addresses: ['::a00:a-::a00:14'], prefix: 120 },
      want: [],
    },
    {
      name: 'IPv6',
      a: { addresses: ['fd00::/120'], prefix: 120 },
      b: { addresses: ['fd00::f0-fd00::1:0'], prefix: 64 },
      want: ['fd00::f0-fd00::ff'],
    },
  ])('$name', ({ a, b, want }) => {
    const pa = resolve(a);
    const pb = resolve(b);
    expect(formatRanges(pa.family, findPoolOverlap(pa, pb))).toEqual(want);
    expect(formatRanges(pa.family, findPoolOverlap(pb, pa))).toEqual(want);
    expect(poolsOverlap(pa, pb)).toBe(want.length > 0);
  });

  test('property: an overlapping address is allocatable in one pool and allocatable or the gateway in the other', () => {
    const host = fc.integer({ min: 0, max: 255 });
    const spec = fc.record({
      addresses: fc.array(
        fc.tuple(host, host).map(([x, y]) => `10.1.1.${Math.min(x, y)}-10.1.1.${Math.max(x, y)}`),
        { minLength: 1, maxLength: 3 },
      ),
      prefix: fc.constant(24),
      gateway: fc.option(
        host.map((h) => `10.1.1.${h}`),
        { nil: undefined },
      ),
    });
    fc.assert(
      fc.property(spec, spec, (a, b) => {
        const pa = resolve(a);
        const pb = resolve(b);
        const overlap = findPoolOverlap(pa, pb);
        for (let h = 0n; h <= 255n; h++) {
          const v = 0x0a010100n + h;
          const inA = rangesContain(pa.allocatable, v);
          const inB = rangesContain(pb.allocatable, v);
          const want = (inA && inB) || (inA && pb.gateway === v) || (inB && pa.gateway === v);
          expect(rangesContain(overlap, v)).toBe(want);
        }
      }),
    );
  });
});

describe('overlapIssue', () => {
  test('names the other pool and the shared ranges', () => {
    const pool = resolve({ addresses: ['10.0.0.10-10.0.0.20'], prefix: 24 });
    const other = resolve({ addresses: ['10.0.0.15-10.0.0.30'], prefix: 24 });
    expect(overlapIssue({ pool, other, otherName: 'InClusterIPPool team-a/vrf-pool' })).toEqual({
      code: 'PoolOverlap',
      path: ['addresses'],
      message: 'addresses overlap with InClusterIPPool team-a/vrf-pool: 10.0.0.15-10.0.0.20',
    });
  });

  test('lists at most five ranges', () => {
    const pool = resolve({ addresses: ['10.0.0.0/24'], prefix: 24 });
    const other = resolve({
      addresses: ['10.0.0.1', '10.0.0.3', '10.0.0.5', '10.0.0.7', '10.0.0.9', '10.0.0.11', '10.0.0.13'],
      prefix: 24,
      allocateReservedIPAddresses: true,
    });
    expect(overlapIssue({ pool, other, otherName: 'x' })?.message).toBe(
      'addresses overlap with x: 10.0.0.1, 10.0.0.3, 10.0.0.5, 10.0.0.7, 10.0.0.9 and 2 more ranges',
    );
  });

  test('no overlap, no issue', () => {
    const pool = resolve({ addresses: ['10.0.0.10-10.0.0.20'], prefix: 24 });
    const other = resolve({ addresses: ['10.0.0.21-10.0.0.30'], prefix: 24 });
    expect(overlapIssue({ pool, other, otherName: 'x' })).toBeUndefined();
  });
});
