// Retry decisions for one Metal API call, as pure functions: the transport asks after every failed
// attempt whether to try again and how long to wait. Time and randomness come in as arguments.

import { cappedExponentialMs, withEqualJitter } from '@metal-l2/backoff';

/** How hard one call tries before it gives up. */
export interface RetryPolicy {
  /** HTTP attempts per call, the first one included (1 = never retry). */
  maxAttempts: number;
  /** Backoff before the first retry; doubles with each further retry. */
  baseDelayMs: number;
  /** Upper bound of the exponential backoff. */
  maxDelayMs: number;
  /**
   * Longest Retry-After the client waits out inside one call. When the API asks for more, the call
   * ends with the error (its `retryAfterMs` set) so that a controller can requeue instead of
   * holding a worker for minutes.
   */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  // Longer waits end the call: the controllers requeue after the Retry-After (error-policy) rather
  // than hold a worker that long.
  maxRetryAfterMs: 5_000,
};

export type RetryReason = 'rate-limited' | 'server-error' | 'network' | 'timeout';

/** How one attempt failed, as far as retrying is concerned. */
export type AttemptFailure =
  | { kind: 'status'; status: number; retryAfterMs?: number | undefined }
  /** `neverSent`: the connection was refused, so the server cannot have seen the request. */
  | { kind: 'network'; neverSent: boolean }
  | { kind: 'timeout' };

export type RetryDecision = { kind: 'retry'; delayMs: number; reason: RetryReason } | { kind: 'stop' };

export interface RetryQuestion {
  failure: AttemptFailure;
  /** 1-based number of the attempt that just failed. */
  attempt: number;
  policy: RetryPolicy;
  /**
   * Whether repeating the request after the server may have processed it is harmless. Reads,
   * updates, deletes and port actions are (a repeat ends in the same state or a 422 the caller
   * re-reads after); creates are not (a repeat can make a second object), so they are retried only
   * when the API certainly did not act: 429, or a refused connection.
   */
  isIdempotent: boolean;
  /** Uniform in [0, 1); Math.random in production. */
  random: () => number;
}

/** Whether to try again after a failed attempt, and after how long. */
export function decideRetry(q: RetryQuestion): RetryDecision {
  if (q.attempt >= q.policy.maxAttempts) return { kind: 'stop' };
  const reason = retryReason(q.failure, q.isIdempotent);
  if (reason === undefined) return { kind: 'stop' };
  const retryAfterMs = q.failure.kind === 'status' ? q.failure.retryAfterMs : undefined;
  if (retryAfterMs !== undefined) {
    // The server named the wait; follow it exactly rather than second-guessing with backoff.
    if (retryAfterMs > q.policy.maxRetryAfterMs) return { kind: 'stop' };
    return { kind: 'retry', delayMs: retryAfterMs, reason };
  }
  return { kind: 'retry', delayMs: backoffDelayMs(q.policy, q.attempt, q.random), reason };
}

function retryReason(failure: AttemptFailure, isIdempotent: boolean): RetryReason | undefined {
  switch (failure.kind) {
    case 'status':
      // 429 means the request was turned away before it was processed: always safe to repeat.
      if (failure.status === 429) return 'rate-limited';
      // 501 will not change by asking again; other 5xx are usually transient.
      if (failure.status >= 500 && failure.status !== 501 && isIdempotent) return 'server-error';
      return undefined;
    case 'network':
      return isIdempotent || failure.neverSent ? 'network' : undefined;
    case 'timeout':
      return isIdempotent ? 'timeout' : undefined;
  }
}

/**
 * The capped exponential backoff with equal jitter (half fixed, half random), so that many clients
 * hit by the same outage spread out but none retries at once. `retry` is 1 for the first retry.
 */
export function backoffDelayMs(policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>, retry: number, random: () => number): number {
  return withEqualJitter(cappedExponentialMs({ baseMs: policy.baseDelayMs, maxMs: policy.maxDelayMs }, retry), random);
}

/**
 * Reads a Retry-After header: delta-seconds ("120") or an HTTP date. Dates in the past mean "now"
 * (0). Anything unreadable is ignored (undefined) and ordinary backoff applies.
 */
export function parseRetryAfterMs(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only a date-looking value is parsed as a date: Date.parse accepts bare numbers like "1.5".
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
