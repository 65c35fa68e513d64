import { describe, expect, test } from '@jest/globals';
import { backoffDelayMs, decideRetry, DEFAULT_RETRY_POLICY, parseRetryAfterMs } from './retry.js';
import type { AttemptFailure, RetryDecision } from './retry.js';

const policy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 10_000 };
const half = (): number => 0.5;

const decisions: { name: string; failure: AttemptFailure; attempt?: number; isIdempotent?: boolean; want: RetryDecision }[] = [
  { name: '429 is retried', failure: { kind: 'status', status: 429 }, want: { kind: 'retry', delayMs: 75, reason: 'rate-limited' } },
  {
    name: '429 is retried for creates too',
    failure: { kind: 'status', status: 429 },
    isIdempotent: false,
    want: { kind: 'retry', delayMs: 75, reason: 'rate-limited' },
  },
  {
    name: '429 follows Retry-After exactly',
    failure: { kind: 'status', status: 429, retryAfterMs: 3_000 },
    want: { kind: 'retry', delayMs: 3_000, reason: 'rate-limited' },
  },
  {
    name: '503 follows Retry-After too',
    failure: { kind: 'status', status: 503, retryAfterMs: 2_000 },
    want: { kind: 'retry', delayMs: 2_000, reason: 'server-error' },
  },
  { name: 'Retry-After beyond the cap stops', failure: { kind: 'status', status: 429, retryAfterMs: 10_001 }, want: { kind: 'stop' } },
  {
    name: '500 is retried for reads',
    failure: { kind: 'status', status: 500 },
    want: { kind: 'retry', delayMs: 75, reason: 'server-error' },
  },
  { name: '500 is not retried for creates', failure: { kind: 'status', status: 500 }, isIdempotent: false, want: { kind: 'stop' } },
  { name: '501 is not retried', failure: { kind: 'status', status: 501 }, want: { kind: 'stop' } },
  { name: '422 is not retried', failure: { kind: 'status', status: 422 }, want: { kind: 'stop' } },
  { name: '404 is not retried', failure: { kind: 'status', status: 404 }, want: { kind: 'stop' } },
  {
    name: 'a network error is retried for reads',
    failure: { kind: 'network', neverSent: false },
    want: { kind: 'retry', delayMs: 75, reason: 'network' },
  },
  {
    name: 'a network error is not retried for creates',
    failure: { kind: 'network', neverSent: false },
    isIdempotent: false,
    want: { kind: 'stop' },
  },
  {
    name: 'a refused connection is retried for creates',
    failure: { kind: 'network', neverSent: true },
    isIdempotent: false,
    want: { kind: 'retry', delayMs: 75, reason: 'network' },
  },
  { name: 'a timeout is retried for reads', failure: { kind: 'timeout' }, want: { kind: 'retry', delayMs: 75, reason: 'timeout' } },
  { name: 'a timeout is not retried for creates', failure: { kind: 'timeout' }, isIdempotent: false, want: { kind: 'stop' } },
  {
    name: 'the third retry waits 4x the base',
    failure: { kind: 'status', status: 502 },
    attempt: 3,
    want: { kind: 'retry', delayMs: 300, reason: 'server-error' },
  },
  { name: 'the last attempt stops', failure: { kind: 'status', status: 502 }, attempt: 4, want: { kind: 'stop' } },
];

describe('decideRetry', () => {
  test.each(decisions)('$name', ({ failure, attempt, isIdempotent, want }) => {
    expect(decideRetry({ failure, attempt: attempt ?? 1, policy, isIdempotent: isIdempotent ?? true, random: half })).toEqual(want);
  });

  test('the defaults try four times', () => {
    expect(DEFAULT_RETRY_POLICY.maxAttempts).toBe(4);
  });
});

describe('backoffDelayMs', () => {
  test.each([
    { name: 'first retry, no jitter drawn', retry: 1, random: 0, want: 50 },
    { name: 'first retry, full jitter drawn', retry: 1, random: 0.999_999, want: 100 },
    { name: 'second retry doubles', retry: 2, random: 0, want: 100 },
    { name: 'capped at maxDelayMs', retry: 10, random: 0.999_999, want: 1_000 },
    { name: 'capped, least jitter', retry: 10, random: 0, want: 500 },
  ])('$name', ({ retry, random, want }) => {
    expect(backoffDelayMs(policy, retry, () => random)).toBe(want);
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.UTC(2026, 5, 1, 12, 0, 0);
  test.each([
    { name: 'delta-seconds', value: '30', want: 30_000 },
    { name: 'zero', value: '0', want: 0 },
    { name: 'padded', value: ' 5 ', want: 5_000 },
    { name: 'an HTTP date ahead', value: 'Mon, 01 Jun 2026 12:00:42 GMT', want: 42_000 },
    { name: 'an HTTP date behind', value: 'Mon, 01 Jun 2026 11:00:00 GMT', want: 0 },
    { name: 'missing', value: null, want: undefined },
    { name: 'empty', value: '', want: undefined },
    { name: 'negative', value: '-5', want: undefined },
    { name: 'a fraction', value: '1.5', want: undefined },
    { name: 'garbage', value: 'soon', want: undefined },
  ])('$name', ({ value, want }) => {
    expect(parseRetryAfterMs(value, now)).toBe(want);
  });
});
