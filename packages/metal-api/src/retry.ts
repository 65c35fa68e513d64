// A failed Metal API call, from the first retry to the controller's requeue, in one place:
// - inside the call: the transport asks after every failed attempt whether to try again and how
//   long to wait (pure functions; time and randomness come in as arguments);
// - after the call: what a controller does with the error (error policy, below);
// - the time source both wait by.

import { cappedExponentialMs, withEqualJitter, type BackoffLimits } from '@metal-l2/backoff';
import { METAL_API_ERROR_CODES, MetalApiError, MetalHttpError } from './errors.js';

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

// ---- After the call: the controllers' error policy ----

// What a controller does after a Metal call failed, decided in one place for both controllers:
// - 404: the object is gone (an answer, not a failure);
// - the API named a wait (Retry-After): come back exactly then, no sooner;
// - anything else Metal-side: come back after an exponential, capped backoff over the failures
//   in a row, so a VLAN batch that keeps failing is not retried every few seconds forever;
// - an aborted call (shutdown, lost leadership, the reconcile's deadline): nothing to decide.
// Errors are found through `cause` chains, since callers wrap them with what they attempted.

/** The backoff between failed attempts of one piece of work (a machine's port plan, a VRF). */
export type MetalBackoff = BackoffLimits;

export const DEFAULT_METAL_BACKOFF: MetalBackoff = { baseMs: 5_000, maxMs: 300_000 };

export type MetalErrorVerdict =
  /** 404: the object does not exist (any more). */
  | { readonly kind: 'gone'; readonly error: MetalHttpError }
  /** Try again after `afterMs`; `retryAfter` when the API named the wait itself. */
  | {
      readonly kind: 'retry';
      readonly afterMs: number;
      readonly retryAfter: boolean;
      /** Whether Metal may have acted although the call failed (no answer, a 5xx, an unreadable 2xx). */
      readonly mayHaveActed: boolean;
      readonly error: MetalApiError;
    }
  /** The caller's signal fired: stop, the next attempt starts from scratch. */
  | { readonly kind: 'aborted'; readonly error: MetalApiError }
  /** Not a Metal error at all: the caller's own business. */
  | { readonly kind: 'other' };

/** The first value along `err`'s cause chain that `guard` accepts. */
export function findCause<T>(err: unknown, guard: (value: unknown) => value is T): T | undefined {
  const seen = new Set<unknown>();
  for (let at: unknown = err; at !== undefined && at !== null && !seen.has(at);) {
    if (guard(at)) return at;
    seen.add(at);
    at = at instanceof Error ? at.cause : undefined;
  }
  return undefined;
}

const isMetalApiErrorValue = (value: unknown): value is MetalApiError => value instanceof MetalApiError;

/** The Metal error behind `err` (itself or along its causes), if any. */
export function metalErrorIn(err: unknown): MetalApiError | undefined {
  return findCause(err, isMetalApiErrorValue);
}

/** Whether `err` (or a cause) is a 404 from Metal: the object is gone. */
export function isMetalGone(err: unknown): boolean {
  const metal = metalErrorIn(err);
  return metal instanceof MetalHttpError && metal.status === 404;
}

/** Capped exponential: base, 2 x base, 4 x base, ... for failures 1, 2, 3, ... */
export function metalBackoffMs(backoff: MetalBackoff, failures: number): number {
  return cappedExponentialMs(backoff, failures);
}

/**
 * The verdict on a failed Metal call. `failures` counts the failures in a row of the same work,
 * this one included (1 for the first).
 */
export function judgeMetalError(err: unknown, options: { failures: number; backoff?: MetalBackoff }): MetalErrorVerdict {
  const metal = metalErrorIn(err);
  if (metal === undefined) return { kind: 'other' };
  if (metal.code === METAL_API_ERROR_CODES.aborted) return { kind: 'aborted', error: metal };
  if (metal instanceof MetalHttpError && metal.status === 404) return { kind: 'gone', error: metal };
  const mayHaveActed = metal instanceof MetalHttpError ? metal.status >= 500 : true;
  const retryAfterMs = metal instanceof MetalHttpError ? metal.retryAfterMs : undefined;
  if (retryAfterMs !== undefined) return { kind: 'retry', afterMs: retryAfterMs, retryAfter: true, mayHaveActed, error: metal };
  const afterMs = metalBackoffMs(options.backoff ?? DEFAULT_METAL_BACKOFF, options.failures);
  return { kind: 'retry', afterMs, retryAfter: false, mayHaveActed, error: metal };
}

// ---- Time ----

// The client's only contact with time and chance. Production uses the system; tests pass their own
// so that backoff, Retry-After and rate limiting are checked without waiting real time.

export interface TimeSource {
  /** Milliseconds since the epoch (Date.now). */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason as soon as the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Uniform in [0, 1), for jitter. */
  random(): number;
}

export const systemTime: TimeSource = {
  now: () => Date.now(),
  sleep: sleepFor,
  random: () => Math.random(),
};

function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('sleep aborted', { cause: reason });
}
