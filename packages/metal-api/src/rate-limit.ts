// A client-side token bucket in front of every HTTP attempt (retries included), so that a burst of
// reconciles does not turn into a 429 storm. Metal publishes no quota; the defaults are a guess
// kept well below what one project's automation is known to sustain, and callers can change them.

import type { TimeSource } from './retry.js';

export interface RateLimitOptions {
  /** Sustained rate: tokens added per second. */
  requestsPerSecond: number;
  /** Bucket size: how many requests may go at once after a quiet period. */
  burst: number;
}

export const DEFAULT_RATE_LIMIT: Readonly<RateLimitOptions> = { requestsPerSecond: 10, burst: 20 };

export class RateLimitFormatError extends RangeError {
  override readonly name = 'RateLimitFormatError';
}

/** Throws RateLimitFormatError unless the rate is above 0 and the burst a whole number from 1. */
export function checkRateLimitOptions<T extends RateLimitOptions>(options: T): T {
  if (!Number.isFinite(options.requestsPerSecond) || options.requestsPerSecond <= 0) {
    throw new RateLimitFormatError(`the rate limit's requests per second must be a number above 0, got ${options.requestsPerSecond}`);
  }
  if (!Number.isInteger(options.burst) || options.burst < 1) {
    throw new RateLimitFormatError(`the rate limit's burst must be a whole number from 1, got ${options.burst}`);
  }
  return options;
}

/**
 * A rate limit as flags write it, `<requests per second>[:<burst>]` ("5", "5:10", "0.5:2"); the
 * burst defaults to one second's worth (at least 1). The same text for the controllers' client
 * limit and the simulator's server limit, so one figure means the same on both sides.
 */
export function parseRateLimit(text: string): RateLimitOptions {
  const match = /^(\d+(?:\.\d+)?)(?::(\d+))?$/.exec(text.trim());
  if (match === null)
    throw new RateLimitFormatError(`a rate limit is <requests per second>[:<burst>], e.g. 5:10, not ${JSON.stringify(text)}`);
  const requestsPerSecond = Number(match[1]);
  const burst = match[2] === undefined ? Math.max(1, Math.ceil(requestsPerSecond)) : Number(match[2]);
  return checkRateLimitOptions({ requestsPerSecond, burst });
}

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
    checkRateLimitOptions(options);
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

/** The flag text of a limit, as parseRateLimit reads it: "10:20". */
export function formatRateLimit(options: RateLimitOptions): string {
  return `${options.requestsPerSecond}:${options.burst}`;
}

/**
 * The controllers' `--metal-rate-limit` (or any flag named `flag`): `<rps>[:<burst>]` as above, or
 * `off` for no client-side limit (Metal's own 429s are still waited out). Errors name the flag.
 */
export function rateLimitFlag(value: string, flag: string): RateLimitOptions | false {
  if (value.trim() === 'off') return false;
  try {
    return parseRateLimit(value);
  } catch (err: unknown) {
    if (err instanceof RateLimitFormatError) throw new RateLimitFormatError(`--${flag}: ${err.message}, or off`);
    throw err;
  }
}
