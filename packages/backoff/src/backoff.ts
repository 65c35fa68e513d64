// Capped exponential backoff: how long the nth failure in a row waits before the next try. The
// work queue, the informers' relists, the Metal client's in-call retries, the controllers' requeues
// after a Metal error and the VRF passes all wait by this one rule; each picks its own limits and
// jitter. A package of its own because both sides of the layering need it: the kube runtime and the
// Metal client, neither of which may import the other.

/** The first delay and the ceiling. */
export interface BackoffLimits {
  /** Delay after the first failure; doubles with each further failure in a row. */
  readonly baseMs: number;
  /** No delay is longer than this. */
  readonly maxMs: number;
}

// Past 2^1000 every base above zero has long passed any ceiling; stopping there keeps a zero base
// at 0 (0 · Infinity would be NaN).
const MAX_EXPONENT = 1000;

/** base, 2·base, 4·base, ... for failures 1, 2, 3, ..., never more than max. Below 1 counts as 1. */
export function cappedExponentialMs(limits: BackoffLimits, failures: number): number {
  const exponent = Math.min(MAX_EXPONENT, Math.max(0, failures - 1));
  return Math.min(limits.maxMs, limits.baseMs * 2 ** exponent);
}

/**
 * "Equal jitter": half of `delayMs` fixed, the other half random, so that many clients hit by the
 * same outage spread out but none retries at once. `random` is uniform in [0, 1).
 */
export function withEqualJitter(delayMs: number, random: () => number): number {
  return Math.round(delayMs / 2 + random() * (delayMs / 2));
}

/** `delayMs` spread uniformly over ±`factor` of itself (0.2: 80 % to 120 %). */
export function withSpreadJitter(delayMs: number, options: { factor: number; random: () => number }): number {
  return Math.round(delayMs * (1 - options.factor + 2 * options.factor * options.random()));
}
