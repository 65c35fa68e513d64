import { describe, expect, test } from '@jest/globals';
import { RecentWrites } from './recent-writes.js';

describe('RecentWrites', () => {
  test('skips an identical write while the cache shows the version it was based on', () => {
    const writes = new RecentWrites();
    writes.remember('status:uid-1', 'Ready/True', { objectId: 'uid-1', basedOn: '41', produced: '42' });
    expect(writes.has('status:uid-1', 'Ready/True', '41')).toBe(true);
    expect(writes.has('status:uid-1', 'Ready/False', '41')).toBe(false);
    expect(writes.has('status:uid-2', 'Ready/True', '41')).toBe(false);
  });

  test('a version another of our writes produced still counts as ours', () => {
    const writes = new RecentWrites();
    // The finalizer patch took the claim from 41 to 42; the status patch was based on the cached 41.
    writes.remember('finalizer:uid-1', 'added', { objectId: 'uid-1', basedOn: '41', produced: '42' });
    writes.remember('status:uid-1', 'Ready/True', { objectId: 'uid-1', basedOn: '41', produced: '43' });
    expect(writes.has('status:uid-1', 'Ready/True', '42')).toBe(true);
  });

  test('trusts the cache again once it shows a version that is not ours', () => {
    const writes = new RecentWrites();
    writes.remember('finalizer:uid-1', 'added', { objectId: 'uid-1', basedOn: '41', produced: '42' });
    expect(writes.has('finalizer:uid-1', 'added', '57')).toBe(false);
    expect(writes.has('finalizer:uid-1', 'added', '41')).toBe(false);
  });

  test('an object the cache does not have yet is matched by its absence', () => {
    const writes = new RecentWrites();
    writes.remember('address:ns/a', '10.0.0.1', { objectId: 'address:ns/a', basedOn: undefined, produced: '7' });
    expect(writes.has('address:ns/a', '10.0.0.1', undefined)).toBe(true);
  });

  test('expires after its time to live, and forget drops an entry at once', () => {
    let now = 1_000;
    const writes = new RecentWrites(30_000, () => now);
    writes.remember('status:uid-1', 'x', { objectId: 'uid-1', basedOn: '1', produced: '2' });
    writes.remember('status:uid-2', 'x', { objectId: 'uid-2', basedOn: '1', produced: '2' });
    now += 30_000;
    expect(writes.has('status:uid-1', 'x', '1')).toBe(false);
    writes.forget('status:uid-2');
    expect(writes.has('status:uid-2', 'x', '1')).toBe(false);
  });

  test('isEcho: the versions our writes produced, not those they were based on, until they expire', () => {
    let now = 1_000;
    const writes = new RecentWrites(30_000, () => now);
    writes.remember('finalizer:uid-1', 'added', { objectId: 'uid-1', basedOn: '41', produced: '42' });
    writes.remember('status:uid-1', 'Ready/True', { objectId: 'uid-1', basedOn: '42', produced: '43' });
    expect(writes.isEcho('uid-1', '42')).toBe(true);
    expect(writes.isEcho('uid-1', '43')).toBe(true);
    expect(writes.isEcho('uid-1', '41')).toBe(false);
    expect(writes.isEcho('uid-1', '44')).toBe(false);
    expect(writes.isEcho('uid-2', '42')).toBe(false);
    expect(writes.isEcho('uid-1', undefined)).toBe(false);
    now += 30_000;
    expect(writes.isEcho('uid-1', '43')).toBe(false);
  });

  test('isEcho: any version while a write to the object is in flight, its own included', async () => {
    const writes = new RecentWrites();
    let answer: (version: string) => void = () => undefined;
    const sent = writes.writing('uid-1', () => new Promise<string>((resolve) => (answer = resolve)));
    expect(writes.isEcho('uid-1', '50')).toBe(true);
    expect(writes.isEcho('uid-2', '50')).toBe(false);
    answer('50');
    expect(await sent).toBe('50');
    expect(writes.isEcho('uid-1', '50')).toBe(false);
    await expect(writes.writing('uid-1', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(writes.isEcho('uid-1', '51')).toBe(false);
  });

  test('what expired is dropped as new writes come, however few entries there are', () => {
    let now = 1_000;
    const writes = new RecentWrites(30_000, () => now);
    for (let i = 0; i < 100; i++) writes.remember(`status:uid-${i}`, 'x', { objectId: `uid-${i}`, basedOn: '1', produced: '2' });
    expect(writes.size()).toBe(200);
    now += 15_000;
    // Written again: its entries live on from now, the others expire at 31,000.
    writes.remember('status:uid-0', 'y', { objectId: 'uid-0', basedOn: '2', produced: '3' });
    now += 15_000;
    writes.remember('status:uid-new', 'x', { objectId: 'uid-new', basedOn: '1', produced: '2' });
    expect(writes.size()).toBe(4);
    expect(writes.has('status:uid-0', 'y', '3')).toBe(true);
    expect(writes.isEcho('uid-0', '3')).toBe(true);
    expect(writes.isEcho('uid-1', '2')).toBe(false);
  });
});
