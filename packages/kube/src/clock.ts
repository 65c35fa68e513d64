import { cappedExponentialMs, withSpreadJitter } from '@metal-l2/backoff';

/** Cancels a scheduled callback; calling it after the callback ran does nothing. */
export type Cancel = () => void;

/**
 * Time as the runtime sees it. Everything that waits (queue delays, backoff, watchdogs, lease
 * renewals) goes through a Clock so unit tests can drive time by hand.
 */
export interface Clock {
  /**
   * Wall time, milliseconds since the epoch: for timestamps others read (a Lease's renewTime, an
   * Event's). Never for measuring how long something took: NTP or an operator may step it.
   */
  now(): number;
  /**
   * Milliseconds from an arbitrary origin that only moves forward at a steady rate: for durations
   * and deadlines (has the lease been renewed within the renew deadline?).
   */
  monotonic(): number;
  /** Runs `callback` after `delayMs`, always asynchronously (never from inside schedule). */
  schedule(callback: () => void, delayMs: number): Cancel;
}

/** The process clock. Looks the timer functions up on each call, so jest's fake timers apply. */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  schedule: (callback, delayMs) => {
    const timer = setTimeout(callback, Math.max(0, delayMs));
    return () => clearTimeout(timer);
  },
};

/**
 * Resolves after `delayMs`, or as soon as `signal` aborts (it never rejects: callers check
 * signal.aborted afterwards). Used for backoff between retries.
 */
export function sleep(options: { delayMs: number; signal?: AbortSignal | undefined; clock?: Clock }): Promise<void> {
  const { delayMs, signal } = options;
  const clock = options.clock ?? realClock;
  if (signal?.aborted === true) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const cancel = clock.schedule(done, delayMs);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Exponential backoff with full jitter of ±factor, reset by the caller after a success. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly options: { initialMs: number; maxMs: number; jitter?: number; random?: () => number } = {
      initialMs: 1000,
      maxMs: 30_000,
    },
  ) {}

  /** The delay before the next attempt; each call doubles the base up to maxMs. */
  next(): number {
    this.attempt += 1;
    const base = cappedExponentialMs({ baseMs: this.options.initialMs, maxMs: this.options.maxMs }, this.attempt);
    return withSpreadJitter(base, { factor: this.options.jitter ?? 0.2, random: this.options.random ?? Math.random });
  }

  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }
}
