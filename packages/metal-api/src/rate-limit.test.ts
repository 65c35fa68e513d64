import { describe, expect, test } from '@jest/globals';
import { TokenBucket } from './rate-limit.js';
import { fakeTime } from './testing/http-server.js';

describe('TokenBucket', () => {
  test('the burst goes at once, then requests queue at the sustained rate', () => {
    const time = fakeTime();
    const bucket = new TokenBucket({ requestsPerSecond: 4, burst: 2 }, time);
    expect([bucket.reserve(), bucket.reserve(), bucket.reserve(), bucket.reserve(), bucket.reserve()]).toEqual([0, 0, 250, 500, 750]);
  });

  test('tokens come back with time, up to the burst', () => {
    const time = fakeTime();
    const bucket = new TokenBucket({ requestsPerSecond: 10, burst: 3 }, time);
    for (let i = 0; i < 3; i += 1) bucket.reserve();
    time.nowMs += 60_000;
    expect([bucket.reserve(), bucket.reserve(), bucket.reserve(), bucket.reserve()]).toEqual([0, 0, 0, 100]);
  });

  test('take sleeps for its reservation', async () => {
    const time = fakeTime();
    const bucket = new TokenBucket({ requestsPerSecond: 1, burst: 1 }, time);
    await expect(bucket.take()).resolves.toBe(0);
    await expect(bucket.take()).resolves.toBe(1_000);
    expect(time.sleeps).toEqual([1_000]);
  });

  test('an aborted wait hands its token back', async () => {
    const time = fakeTime();
    const bucket = new TokenBucket({ requestsPerSecond: 1, burst: 1 }, time);
    bucket.reserve();
    await expect(bucket.take(AbortSignal.abort())).rejects.toThrow('aborted');
    expect(bucket.reserve()).toBe(1_000);
  });

  test.each([
    { name: 'zero rate', options: { requestsPerSecond: 0, burst: 1 } },
    { name: 'no burst', options: { requestsPerSecond: 1, burst: 0 } },
  ])('refuses $name', ({ options }) => {
    expect(() => new TokenBucket(options, fakeTime())).toThrow(RangeError);
  });
});
