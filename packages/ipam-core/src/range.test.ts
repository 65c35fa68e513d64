import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { AddressRange, RangeSet } from './range.js';
import {
  countRangeAddresses,
  formatRange,
  formatRanges,
  intersectRanges,
  lowerBoundRange,
  normalizeRanges,
  rangeOfPrefix,
  rangesContain,
  rangesContainRange,
  rangesFromValues,
  rangesOverlap,
  subtractRanges,
  unionRanges,
} from './range.js';

const r = (start: number, end: number): AddressRange => ({ start: BigInt(start), end: BigInt(end) });

/** Every address of a set, for comparing against a plain Set model on small universes. */
function expand(set: RangeSet): number[] {
  const out: number[] = [];
  for (const range of set) for (let v = range.start; v <= range.end; v++) out.push(Number(v));
  return out;
}

function isNormalized(set: RangeSet): boolean {
  return set.every((range, i) => {
    const prev = set[i - 1];
    return range.start <= range.end && (prev === undefined || prev.end + 1n < range.start);
  });
}

// Ranges within 0..63 so that a Set of numbers is a faithful model.
const smallRange = fc
  .tuple(fc.integer({ min: 0, max: 63 }), fc.integer({ min: 0, max: 63 }))
  .map(([a, b]) => r(Math.min(a, b), Math.max(a, b)));
const smallSet = fc.array(smallRange, { maxLength: 8 }).map(normalizeRanges);

describe('normalizeRanges', () => {
  test.each([
    { name: 'empty', input: [], want: [] },
    { name: 'sorts', input: [r(10, 12), r(1, 2)], want: [r(1, 2), r(10, 12)] },
    { name: 'merges overlapping', input: [r(1, 5), r(3, 8)], want: [r(1, 8)] },
    { name: 'merges adjacent', input: [r(1, 5), r(6, 8)], want: [r(1, 8)] },
    { name: 'keeps a gap of one', input: [r(1, 5), r(7, 8)], want: [r(1, 5), r(7, 8)] },
    { name: 'contained range disappears', input: [r(1, 10), r(3, 4)], want: [r(1, 10)] },
  ])('$name', ({ input, want }) => {
    expect(normalizeRanges(input)).toEqual(want);
  });
});

describe('rangesFromValues', () => {
  test('collapses runs and ignores duplicates', () => {
    expect(rangesFromValues([5n, 1n, 2n, 3n, 9n, 2n])).toEqual([r(1, 3), r(5, 5), r(9, 9)]);
    expect(rangesFromValues([])).toEqual([]);
  });
});

describe('set operations match a plain Set model', () => {
  test('property: union, subtract, intersect, contain, count', () => {
    fc.assert(
      fc.property(smallSet, smallSet, fc.integer({ min: 0, max: 63 }), (a, b, probe) => {
        const sa = new Set(expand(a));
        const sb = new Set(expand(b));
        const union = unionRanges(a, b);
        const diff = subtractRanges(a, b);
        const inter = intersectRanges(a, b);
        for (const set of [union, diff, inter]) expect(isNormalized(set)).toBe(true);
        expect(expand(union)).toEqual([...new Set([...sa, ...sb])].sort((x, y) => x - y));
        expect(expand(diff)).toEqual([...sa].filter((v) => !sb.has(v)).sort((x, y) => x - y));
        expect(expand(inter)).toEqual([...sa].filter((v) => sb.has(v)).sort((x, y) => x - y));
        expect(rangesContain(a, BigInt(probe))).toBe(sa.has(probe));
        expect(countRangeAddresses(a)).toBe(BigInt(sa.size));
        expect(rangesOverlap(a, b)).toBe([...sa].some((v) => sb.has(v)));
      }),
    );
  });

  test('property: rangesFromValues equals the set of its values', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 63 })), (values) => {
        const set = rangesFromValues(values.map(BigInt));
        expect(isNormalized(set)).toBe(true);
        expect(expand(set)).toEqual([...new Set(values)].sort((x, y) => x - y));
      }),
    );
  });

  test('property: rangesContainRange is "every address of the range is in the set"', () => {
    fc.assert(
      fc.property(smallSet, smallRange, (set, range) => {
        const members = new Set(expand(set));
        const want = expand([range]).every((v) => members.has(v));
        expect(rangesContainRange(set, range)).toBe(want);
      }),
    );
  });
});

describe('lowerBoundRange', () => {
  const set = [r(1, 3), r(10, 12), r(20, 20)];
  test.each([
    { name: 'before everything', value: 0, want: 0 },
    { name: 'inside the first', value: 2, want: 0 },
    { name: 'in a gap', value: 5, want: 1 },
    { name: 'at the last', value: 20, want: 2 },
    { name: 'after everything', value: 21, want: 3 },
  ])('$name', ({ value, want }) => {
    expect(lowerBoundRange(set, BigInt(value))).toBe(want);
  });
});

describe('rangeOfPrefix', () => {
  test.each([
    {
      name: 'IPv4 /24 from a host address',
      family: 4 as const,
      value: 0x0a00004dn,
      prefix: 24,
      want: { start: 0x0a000000n, end: 0x0a0000ffn },
    },
    { name: 'IPv4 /32', family: 4 as const, value: 0x0a000005n, prefix: 32, want: { start: 0x0a000005n, end: 0x0a000005n } },
    { name: 'IPv4 /0 is everything', family: 4 as const, value: 0x0a000005n, prefix: 0, want: { start: 0n, end: 0xffffffffn } },
    {
      name: 'IPv6 /120',
      family: 6 as const,
      value: (0xfd01n << 112n) | 0x1234n,
      prefix: 120,
      want: { start: (0xfd01n << 112n) | 0x1200n, end: (0xfd01n << 112n) | 0x12ffn },
    },
    { name: 'IPv6 /0 is everything', family: 6 as const, value: 5n, prefix: 0, want: { start: 0n, end: (1n << 128n) - 1n } },
  ])('$name', ({ family, value, prefix, want }) => {
    expect(rangeOfPrefix({ family, value }, prefix)).toEqual(want);
  });

  test('a prefix longer than the family is a programming error', () => {
    expect(() => rangeOfPrefix({ family: 4, value: 0n }, 33)).toThrow(RangeError);
    expect(() => rangeOfPrefix({ family: 6, value: 0n }, -1)).toThrow(RangeError);
  });
});

describe('formatRange', () => {
  test('single address and span', () => {
    expect(formatRange(4, r(0x0a000005, 0x0a000005))).toBe('10.0.0.5');
    expect(formatRanges(4, [r(0x0a000005, 0x0a000009), r(0x0a00000c, 0x0a00000c)])).toEqual(['10.0.0.5-10.0.0.9', '10.0.0.12']);
  });
});
