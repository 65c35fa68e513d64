import type { Logger } from '../log.js';
import type { ObjectKey } from '../resource.js';

/**
 * What a reconcile asks for next. Failures are thrown, not returned: an error retries with
 * backoff, a TerminalError is logged and counted but not retried. A union, so "an error and a
 * delay at once" cannot be expressed and every caller handles every case.
 */
export type ReconcileResult = { readonly kind: 'done' } | { readonly kind: 'requeueAfter'; readonly afterMs: number };

/** Nothing more to do until a watched object changes. */
export function done(): ReconcileResult {
  return { kind: 'done' };
}

/** Come back after `afterMs` (a known wait: a grace period, a batch being polled). */
export function requeueAfter(afterMs: number): ReconcileResult {
  return { kind: 'requeueAfter', afterMs: Math.max(0, afterMs) };
}

/** The sooner of two results (for runners that collect results of several steps). */
export function soonest(a: ReconcileResult, b: ReconcileResult): ReconcileResult {
  if (a.kind === 'done') return b;
  if (b.kind === 'done') return a;
  return a.afterMs <= b.afterMs ? a : b;
}

export interface ReconcileContext {
  /** Carries {controller, namespace, name, reconcileID}. */
  readonly logger: Logger;
  readonly reconcileID: string;
  /** Aborts when the controller stops (shutdown, lost leadership): stop early, nothing is lost. */
  readonly signal: AbortSignal;
}

/**
 * Makes the world match one object's spec. Called with a key only (level-based: read the current
 * state from the cache, never trust the event). Never called concurrently for the same key.
 */
export interface Reconciler {
  reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult>;
}
