import { describe, expect, test } from '@jest/globals';
import { isMetalGone, judgeMetalError, metalBackoffMs } from './retry.js';
import { MetalAbortedError, MetalHttpError, MetalNetworkError } from './errors.js';

const at = { operation: 'findDeviceById', method: 'GET', path: '/devices/d1', attempts: 1 };
const http = (status: number, retryAfterMs?: number): MetalHttpError => new MetalHttpError({ ...at, status, apiErrors: [], retryAfterMs });
const wrapped = (cause: unknown): Error => new Error('configure the ports of device d1', { cause: new Error('drive ports', { cause }) });

describe('judgeMetalError', () => {
  test('a 404 means gone, also when wrapped', () => {
    expect(judgeMetalError(http(404), { failures: 1 }).kind).toBe('gone');
    expect(judgeMetalError(wrapped(http(404)), { failures: 1 }).kind).toBe('gone');
    expect(isMetalGone(wrapped(http(404)))).toBe(true);
    expect(isMetalGone(wrapped(http(403)))).toBe(false);
  });

  test('a Retry-After is followed exactly, whatever the failure count', () => {
    expect(judgeMetalError(wrapped(http(429, 60_000)), { failures: 1 })).toMatchObject({
      kind: 'retry',
      afterMs: 60_000,
      retryAfter: true,
      mayHaveActed: false,
    });
    expect(judgeMetalError(http(503, 2_000), { failures: 7 })).toMatchObject({
      kind: 'retry',
      afterMs: 2_000,
      retryAfter: true,
      mayHaveActed: true,
    });
  });

  test('other failures back off exponentially over the failures in a row, capped', () => {
    const backoff = { baseMs: 5_000, maxMs: 60_000 };
    const delays = [1, 2, 3, 4, 5, 6, 50].map((failures) => judgeMetalError(http(500), { failures, backoff }));
    expect(delays.map((v) => (v.kind === 'retry' ? v.afterMs : undefined))).toEqual([
      5_000, 10_000, 20_000, 40_000, 60_000, 60_000, 60_000,
    ]);
  });

  test('no answer may have acted; a 4xx did not', () => {
    const network = new MetalNetworkError({ ...at, cause: new Error('ECONNRESET') });
    expect(judgeMetalError(network, { failures: 1 })).toMatchObject({ kind: 'retry', mayHaveActed: true });
    expect(judgeMetalError(http(422), { failures: 1 })).toMatchObject({ kind: 'retry', mayHaveActed: false });
  });

  test('an aborted call and a non-Metal error are told apart', () => {
    expect(judgeMetalError(wrapped(new MetalAbortedError(at)), { failures: 1 }).kind).toBe('aborted');
    expect(judgeMetalError(new Error('the device reports no metro'), { failures: 1 }).kind).toBe('other');
  });

  test('a cause cycle ends the search', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.assign(a, { cause: b });
    expect(judgeMetalError(a, { failures: 1 }).kind).toBe('other');
  });

  test('metalBackoffMs never overflows', () => {
    expect(metalBackoffMs({ baseMs: 1, maxMs: 300_000 }, 10_000)).toBe(300_000);
  });
});
