import { describe, expect, test } from '@jest/globals';
import { RecentWrites } from './recent-writes.js';

describe('RecentWrites', () => {
  test('remembers a value until its time to live ends, and only that value', () => {
    let now = 1_000;
    const writes = new RecentWrites(30_000, () => now);
    writes.remember('status:uid-1', 'Ready/True');
    expect(writes.has('status:uid-1', 'Ready/True')).toBe(true);
    expect(writes.has('status:uid-1', 'Ready/False')).toBe(false);
    expect(writes.has('status:uid-2', 'Ready/True')).toBe(false);
    now += 30_000;
    expect(writes.has('status:uid-1', 'Ready/True')).toBe(false);
  });

  test('forget drops an entry at once', () => {
    const writes = new RecentWrites();
    writes.remember('finalizer:uid-1', 'added');
    writes.forget('finalizer:uid-1');
    expect(writes.has('finalizer:uid-1', 'added')).toBe(false);
  });
});
