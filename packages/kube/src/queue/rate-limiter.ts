import { cappedExponentialMs } from '@metal-l2/backoff';
import { realClock, type Clock } from '../clock.js';

/** Decides how long a failed key waits before it is processed again (client-go semantics). */
export interface RateLimiter {
  /** The delay for this key now; counts as one more requeue. */
  when(key: string): number;
  /** The key succeeded: its backoff starts over. */
  forget(key: string): void;
  numRequeues(key: string): number;
}

/** Per key: baseDelayMs · 2^failures, capped at maxDelayMs. */
export class ItemExponentialRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(private readonly options: { baseDelayMs: number; maxDelayMs: number } = { baseDelayMs: 5, maxDelayMs: 300_000 }) {}

  when(key: string): number {
    const count = this.failures.get(key) ?? 0;
    this.failures.set(key, count + 1);
    return cappedExponentialMs({ baseMs: this.options.baseDelayMs, maxMs: this.options.maxDelayMs }, count + 1);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * A token bucket over all keys: `burst` retries at once, then `qps` per second. It bounds the
 * total retry rate when many keys fail together (an API server outage), which per-key backoff
 * alone does not. Reservations may go into debt, as golang.org/x/time/rate's do, so each
 * caller gets its own later slot.
 */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number | undefined;

  constructor(private readonly options: { qps: number; burst: number; clock?: Clock } = { qps: 10, burst: 100 }) {
    this.tokens = options.burst;
  }

  when(_key: string): number {
    const clock = this.options.clock ?? realClock;
    const now = clock.monotonic();
    const elapsedMs = this.last === undefined ? 0 : now - this.last;
    this.last = now;
    this.tokens = Math.min(this.options.burst, this.tokens + (elapsedMs / 1000) * this.options.qps);
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.options.qps) * 1000);
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

/** The longest delay of several limiters; requeues are counted by the per-item ones. */
export class MaxOfRateLimiter implements RateLimiter {
  constructor(private readonly limiters: readonly RateLimiter[]) {}

  when(key: string): number {
    return Math.max(0, ...this.limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    return Math.max(0, ...this.limiters.map((l) => l.numRequeues(key)));
  }
}

/** client-go's default controller limiter: 5 ms → 5 min per key, and 10 qps / burst 100 overall. */
export function defaultControllerRateLimiter(clock: Clock = realClock): RateLimiter {
  return new MaxOfRateLimiter([
    new ItemExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 300_000 }),
    new BucketRateLimiter({ qps: 10, burst: 100, clock }),
  ]);
}
