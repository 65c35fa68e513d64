import { describe, expect, test } from '@jest/globals';
import { parseRateLimit, RateLimitFormatError, rateLimitFlag, TokenBucket } from './rate-limit.js';
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

describe('parseRateLimit and rateLimitFlag', () => {
  test.each([
    ['5', { requestsPerSecond: 5, burst: 5 }],
    ['5:10', { requestsPerSecond: 5, burst: 10 }],
    ['0.5', { requestsPerSecond: 0.5, burst: 1 }],
    [' 2.5:8 ', { requestsPerSecond: 2.5, burst: 8 }],
  ])('%j is %j', (text, expected) => {
    expect(parseRateLimit(text)).toEqual(expected);
    expect(rateLimitFlag(text, 'metal-rate-limit')).toEqual(expected);
  });

  test('off turns the client-side limit off', () => {
    expect(rateLimitFlag('off', 'metal-rate-limit')).toBe(false);
    expect(() => parseRateLimit('off')).toThrow(RateLimitFormatError);
  });

  test.each([
    ['fast', 'a rate limit is <requests per second>[:<burst>], e.g. 5:10, not "fast"'],
    ['0:5', "the rate limit's requests per second must be a number above 0, got 0"],
    ['5:0', "the rate limit's burst must be a whole number from 1, got 0"],
    ['5:2.5', 'a rate limit is <requests per second>[:<burst>]'],
  ])('%j is refused, the flag named', (text, message) => {
    expect(() => parseRateLimit(text)).toThrow(message);
    expect(() => rateLimitFlag(text, 'metal-rate-limit')).toThrow(`--metal-rate-limit: ${message}`);
  });
});
