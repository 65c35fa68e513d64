// What a controller does after a Metal call failed, decided in one place for both controllers:
// - 404: the object is gone (an answer, not a failure);
// - the API named a wait (Retry-After): come back exactly then, no sooner;
// - anything else Metal-side: come back after an exponential, capped backoff over the failures
//   in a row, so a VLAN batch that keeps failing is not retried every few seconds forever;
// - an aborted call (shutdown, lost leadership, the reconcile's deadline): nothing to decide.
// Errors are found through `cause` chains, since callers wrap them with what they attempted.

import { cappedExponentialMs, type BackoffLimits } from '@metal-l2/backoff';
import { METAL_API_ERROR_CODES, MetalApiError, MetalHttpError } from './errors.js';

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
