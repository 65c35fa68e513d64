import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { Allocation } from './allocation.js';
import { expireReleased, formatReleaseTimestamp, isReusable, releaseClaims } from './release.js';

const t0 = new Date('2025-01-02T03:04:05.000Z');
const at = (secondsAfterT0: number): Date => new Date(t0.getTime() + secondsAfterT0 * 1000);

const allocations: Allocation[] = [
  { address: '10.0.0.10', claim: { name: 'a' } },
  { address: '10.0.0.11', claim: { namespace: 'team-b', name: 'a' } },
  { address: '10.0.0.12', claim: { name: 'c' } },
];

describe('releaseClaims', () => {
  test('with a grace period the entry stays, marked released', () => {
    const out = releaseClaims(allocations, [{ name: 'a' }], { now: t0, gracePeriodSeconds: 30 });
    expect(out).toEqual([
      { address: '10.0.0.10', claim: { name: 'a' }, releasedAt: '2025-01-02T03:04:05Z' },
      allocations[1],
      allocations[2],
    ]);
  });

  test('without a grace period the entry is removed', () => {
    const out = releaseClaims(allocations, [{ namespace: 'team-b', name: 'a' }], { now: t0, gracePeriodSeconds: 0 });
    expect(out.map((a) => a.address)).toEqual(['10.0.0.10', '10.0.0.12']);
  });

  test('releasing again keeps the first releasedAt, so repeated reconciles do not extend the wait', () => {
    const once = releaseClaims(allocations, [{ name: 'a' }], { now: t0, gracePeriodSeconds: 30 });
    const twice = releaseClaims(once, [{ name: 'a' }], { now: at(20), gracePeriodSeconds: 30 });
    expect(twice[0]?.releasedAt).toBe('2025-01-02T03:04:05Z');
  });
});

describe('expireReleased', () => {
  const released = releaseClaims(allocations, [{ name: 'a' }], { now: t0, gracePeriodSeconds: 30 });

  test.each([
    { name: 'before the grace period ends the address stays held', now: at(29), grace: 30, expired: [], next: 1000 },
    { name: 'at exactly releasedAt + grace it is free again', now: at(30), grace: 30, expired: ['10.0.0.10'], next: undefined },
    { name: 'after it, free', now: at(300), grace: 30, expired: ['10.0.0.10'], next: undefined },
    { name: 'a shortened grace period applies to held entries', now: at(5), grace: 5, expired: ['10.0.0.10'], next: undefined },
    { name: 'grace 0 (pool deleted) frees at once', now: t0, grace: 0, expired: ['10.0.0.10'], next: undefined },
  ])('$name', ({ now, grace, expired, next }) => {
    const result = expireReleased(released, { now, gracePeriodSeconds: grace });
    expect(result.expired.map((a) => a.address)).toEqual(expired);
    expect(result.allocations).toHaveLength(3 - expired.length);
    expect(result.nextExpiryInMs).toBe(next);
  });

  test('active allocations never expire', () => {
    expect(expireReleased(allocations, { now: at(1e9), gracePeriodSeconds: 0 }).expired).toEqual([]);
    expect(isReusable(allocations[0]!, { now: at(1e9), gracePeriodSeconds: 0 })).toBe(false);
  });

  test('an invalid releasedAt built in code is a broken invariant', () => {
    expect(() =>
      expireReleased([{ address: '10.0.0.1', claim: { name: 'x' }, releasedAt: 'yesterday' }], { now: t0, gracePeriodSeconds: 1 }),
    ).toThrow(RangeError);
  });

  test('property: an address is reusable exactly when now >= release time + grace, never earlier', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        fc.integer({ min: 0, max: 86_400 }),
        fc.integer({ min: -100_000_000, max: 100_000_000 }),
        (releaseMs, grace, deltaMs) => {
          const releasedNow = new Date(releaseMs);
          const [entry] = releaseClaims([{ address: '10.0.0.1', claim: { name: 'x' } }], [{ name: 'x' }], {
            now: releasedNow,
            gracePeriodSeconds: Math.max(grace, 1),
          });
          const now = new Date(releaseMs + grace * 1000 + deltaMs);
          const reusable = isReusable(entry!, { now, gracePeriodSeconds: grace });
          // The stored time is rounded up to the second: never reusable before release + grace.
          if (deltaMs < 0) expect(reusable).toBe(false);
          if (deltaMs >= 1000) expect(reusable).toBe(true);
        },
      ),
    );
  });
});

describe('formatReleaseTimestamp', () => {
  test('RFC 3339 UTC, whole seconds, rounded up', () => {
    expect(formatReleaseTimestamp(t0)).toBe('2025-01-02T03:04:05Z');
    expect(formatReleaseTimestamp(new Date('2025-01-02T03:04:05.001Z'))).toBe('2025-01-02T03:04:06Z');
  });
});
