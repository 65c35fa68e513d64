// A client-side token bucket in front of every HTTP attempt (retries included), so that a burst of
// reconciles does not turn into a 429 storm. Metal publishes no quota; the defaults are a guess
// kept well below what one project's automation is known to sustain, and callers can change them.

import type { TimeSource } from './time.js';

export interface RateLimitOptions {
  /** Sustained rate: tokens added per second. */
  requestsPerSecond: number;
  /** Bucket size: how many requests may go at once after a quiet period. */
  burst: number;
}

export const DEFAULT_RATE_LIMIT: Readonly<RateLimitOptions> = { requestsPerSecond: 10, burst: 20 };

/**
 * Callers reserve a token and wait for their own reservation; the count may go negative, which
 * queues later callers behind earlier ones without a waiting list (first come, first served).
 */
export class TokenBucket {
  readonly #rate: number;
  readonly #burst: number;
  readonly #time: Pick<TimeSource, 'now' | 'sleep'>;
  #tokens: number;
  #updatedAt: number | undefined;

  constructor(options: RateLimitOptions, time: Pick<TimeSource, 'now' | 'sleep'>) {
    if (!(options.requestsPerSecond > 0) || !(options.burst >= 1)) {
      throw new RangeError('rate limit needs requestsPerSecond > 0 and burst >= 1');
    }
    this.#rate = options.requestsPerSecond;
    this.#burst = options.burst;
    this.#time = time;
    this.#tokens = options.burst;
  }

  /** Takes one token, waiting as long as needed; resolves with the wait in ms (0 = no wait). */
  async take(signal?: AbortSignal): Promise<number> {
    const waitMs = this.reserve();
    if (waitMs === 0) return 0;
    try {
      await this.#time.sleep(waitMs, signal);
    } catch (err: unknown) {
      // The caller gave up: hand the reservation back so it does not slow down everyone else.
      this.#tokens += 1;
      throw err;
    }
    return waitMs;
  }

  /** Reserves one token now and says how long the caller must wait before using it. */
  reserve(): number {
    this.#refill();
    this.#tokens -= 1;
    if (this.#tokens >= 0) return 0;
    return Math.ceil((-this.#tokens / this.#rate) * 1000);
  }

  #refill(): void {
    const now = this.#time.now();
    if (this.#updatedAt !== undefined && now > this.#updatedAt) {
      this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#updatedAt) / 1000) * this.#rate);
    }
    this.#updatedAt = Math.max(now, this.#updatedAt ?? now);
  }
}
