// What the client tells the outside world about its calls: a logger for people and an observer
// for metrics. Both are optional and neither ever receives the API token.

import type { MetalApiError, MetalApiErrorCode } from './errors.js';
import type { RetryReason } from './retry.js';

export type LogFields = Record<string, unknown>;

/** The logger shape the client writes to (winston's logger fits; so does a child logger). */
export interface MetalLogger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export const silentLogger: MetalLogger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** The HTTP status of one attempt, or how it ended without one. */
export type AttemptStatus = number | 'network' | 'timeout' | 'aborted';

/** One HTTP request that went out (a call makes one per attempt). */
export interface AttemptFinished {
  operation: string;
  method: string;
  attempt: number;
  status: AttemptStatus;
  durationMs: number;
}

/** The client decided to repeat a failed attempt after `delayMs`. */
export interface RetryScheduled {
  operation: string;
  method: string;
  /** The attempt that failed (1-based). */
  attempt: number;
  reason: RetryReason;
  delayMs: number;
}

/** A call ended, successfully (`outcome: 'ok'`) or with the error it threw. */
export interface CallFinished {
  operation: string;
  method: string;
  attempts: number;
  durationMs: number;
  outcome: 'ok' | MetalApiErrorCode;
  error?: MetalApiError;
}

/** The client-side rate limit held a request back. */
export interface RateLimitWaited {
  operation: string;
  waitMs: number;
}

/** Hooks for metrics; every one is optional. Hooks run inline, so they should be cheap. */
export interface MetalApiObserver {
  attemptFinished?(event: AttemptFinished): void;
  retryScheduled?(event: RetryScheduled): void;
  callFinished?(event: CallFinished): void;
  rateLimitWaited?(event: RateLimitWaited): void;
}
