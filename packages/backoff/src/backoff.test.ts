import { describe, expect, test } from '@jest/globals';
import { cappedExponentialMs, withEqualJitter, withSpreadJitter } from './backoff.js';

describe('cappedExponentialMs', () => {
  test.each([
    [0, 5],
    [1, 5],
    [2, 10],
    [3, 20],
    [8, 640],
    [9, 1000],
    [10_000, 1000],
  ])('failure %i waits %i ms', (failures, want) => {
    expect(cappedExponentialMs({ baseMs: 5, maxMs: 1000 }, failures)).toBe(want);
  });

  test('never overflows, and a zero base stays zero', () => {
    expect(cappedExponentialMs({ baseMs: 1, maxMs: 300_000 }, Number.MAX_SAFE_INTEGER)).toBe(300_000);
    expect(cappedExponentialMs({ baseMs: 0, maxMs: 300_000 }, 10_000)).toBe(0);
  });
});

describe('jitter', () => {
  test('equal jitter keeps half fixed', () => {
    expect(withEqualJitter(1000, () => 0)).toBe(500);
    expect(withEqualJitter(1000, () => 0.999)).toBe(1000);
  });

  test('spread jitter stays within ±factor', () => {
    expect(withSpreadJitter(1000, { factor: 0.2, random: () => 0 })).toBe(800);
    expect(withSpreadJitter(1000, { factor: 0.2, random: () => 0.5 })).toBe(1000);
    expect(withSpreadJitter(1000, { factor: 0.2, random: () => 0.999 })).toBe(1200);
  });
});
