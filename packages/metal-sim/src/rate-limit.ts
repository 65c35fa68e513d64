// The simulator's optional API rate limit: a token bucket per API token, as an API gateway in front
// of Metal would keep one per credential. Equinix publishes no figures for the Metal API's limits
// (its documentation names 429 and Retry-After, not a rate), so the rate and burst are the
// caller's choice; off unless given. Time comes from the simulator's clock, so tests move it.

import { checkRateLimitOptions, parseRateLimit as parseClientRateLimit, RateLimitFormatError } from '@metal-l2/metal-api';
import type { SimClock } from './clock.js';

export interface SimRateLimit {
  /** Tokens added to each API token's bucket per second. */
  readonly requestsPerSecond: number;
  /** Bucket size: the requests one API token may send at once after a quiet period. */
  readonly burst: number;
  /**
   * The API tokens the limit applies to; every token when absent. Lets a test limit one client
   * (the network controller's own token) and not another that cannot take a 429 (CAPP v0.9.0
   * turns a refused createDevice into a terminal CreateMachineError).
   */
  readonly tokens?: readonly string[];
}

export class RateLimitSpecError extends Error {
  override readonly name = 'RateLimitSpecError';
}

/** Checks a limit given in process or on the command line. */
export function checkRateLimit(limit: SimRateLimit): SimRateLimit {
  try {
    checkRateLimitOptions(limit);
  } catch (err: unknown) {
    throw asSpecError(err);
  }
  if (limit.tokens !== undefined && limit.tokens.length === 0) {
    throw new RateLimitSpecError(`the rate limit's tokens, when given, name at least one API token (leave it out to limit every token)`);
  }
  return limit;
}

/** `<rps>[:<burst>]`, e.g. "5" or "5:10": the controllers' flag grammar (packages/metal-api). */
export function parseRateLimit(text: string): SimRateLimit {
  try {
    return parseClientRateLimit(text);
  } catch (err: unknown) {
    throw asSpecError(err);
  }
}

function asSpecError(err: unknown): unknown {
  return err instanceof RateLimitFormatError ? new RateLimitSpecError(err.message) : err;
}

/** The answer for one request: go ahead, or refused with the whole seconds until a token is there. */
export type RateDecision = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class SimRateLimiter {
  readonly limit: SimRateLimit;
  readonly #clock: Pick<SimClock, 'now'>;
  readonly #buckets = new Map<string, Bucket>();
  #refused = 0;

  constructor(limit: SimRateLimit, clock: Pick<SimClock, 'now'>) {
    this.limit = checkRateLimit(limit);
    this.#clock = clock;
  }

  /** Takes a token from `apiToken`'s bucket, or says how long until one is there (a refusal takes none). */
  take(apiToken: string): RateDecision {
    if (this.limit.tokens !== undefined && !this.limit.tokens.includes(apiToken)) return { allowed: true };
    const now = this.#clock.now();
    const bucket = this.#buckets.get(apiToken) ?? { tokens: this.limit.burst, updatedAt: now };
    if (now > bucket.updatedAt) {
      bucket.tokens = Math.min(this.limit.burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * this.limit.requestsPerSecond);
      bucket.updatedAt = now;
    }
    this.#buckets.set(apiToken, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    this.#refused++;
    // Retry-After takes whole seconds: round up, so a client that waits it out finds a token.
    const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / this.limit.requestsPerSecond));
    return { allowed: false, retryAfterSeconds };
  }

  /** Requests refused so far, all tokens together. */
  get refused(): number {
    return this.#refused;
  }
}
