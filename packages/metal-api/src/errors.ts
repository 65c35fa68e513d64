// One error hierarchy for everything the Metal client can fail with. Callers narrow with the
// guards below (or `instanceof`) and decide about retries from `code`, `status` and
// `retryAfterMs`; nothing outside this package reads raw fetch errors or status codes.
//
// No error carries the API token: messages are built from the operation, method and path only,
// and text that came from the server is passed through the client's redaction before it gets here.

import { isNativeError } from 'node:util/types';

export const METAL_API_ERROR_CODES = {
  http: 'METAL_HTTP',
  network: 'METAL_NETWORK',
  timeout: 'METAL_TIMEOUT',
  aborted: 'METAL_ABORTED',
  invalidResponse: 'METAL_INVALID_RESPONSE',
} as const;
export type MetalApiErrorCode = (typeof METAL_API_ERROR_CODES)[keyof typeof METAL_API_ERROR_CODES];

/** What was attempted: the spec's operationId, the HTTP method and the path below the base URL. */
export interface MetalRequestInfo {
  operation: string;
  method: string;
  path: string;
  /** HTTP attempts made, retries included. */
  attempts: number;
}

/** Base of every error the client throws. */
export abstract class MetalApiError extends Error {
  abstract readonly code: MetalApiErrorCode;
  readonly operation: string;
  readonly method: string;
  readonly path: string;
  readonly attempts: number;

  protected constructor(message: string, request: MetalRequestInfo, options?: { cause?: unknown }) {
    super(message, options);
    this.operation = request.operation;
    this.method = request.method;
    this.path = request.path;
    this.attempts = request.attempts;
  }

  /** A log-friendly shape (winston's JSON format calls this), cause chain included. */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      operation: this.operation,
      method: this.method,
      path: this.path,
      attempts: this.attempts,
      ...this.details(),
      ...(this.cause === undefined ? {} : { cause: describeCause(this.cause) }),
    };
  }

  protected details(): Record<string, unknown> {
    return {};
  }
}

/** The API answered with a status outside 2xx. */
export class MetalHttpError extends MetalApiError {
  override readonly name = 'MetalHttpError';
  readonly code = METAL_API_ERROR_CODES.http;
  readonly status: number;
  /** The API's `errors[]` (or its single `error`), or a short excerpt of a non-JSON body. */
  readonly apiErrors: readonly string[];
  /** How long the API asked us to wait (Retry-After), when it said so. */
  readonly retryAfterMs: number | undefined;

  constructor(init: MetalRequestInfo & { status: number; apiErrors: readonly string[]; retryAfterMs?: number | undefined }) {
    const text = init.apiErrors.length > 0 ? `: ${init.apiErrors.join('; ')}` : '';
    super(`${init.operation} (${init.method} ${init.path}) answered HTTP ${init.status}${text}`, init);
    this.status = init.status;
    this.apiErrors = init.apiErrors;
    this.retryAfterMs = init.retryAfterMs;
  }

  protected override details(): Record<string, unknown> {
    return { status: this.status, apiErrors: this.apiErrors, retryAfterMs: this.retryAfterMs };
  }
}

/** No HTTP answer: connection refused, reset, DNS failure, TLS failure. */
export class MetalNetworkError extends MetalApiError {
  override readonly name = 'MetalNetworkError';
  readonly code = METAL_API_ERROR_CODES.network;

  constructor(init: MetalRequestInfo & { cause: unknown }) {
    super(`${init.operation} (${init.method} ${init.path}) failed without an HTTP answer`, init, { cause: init.cause });
  }
}

/** No complete answer within the per-request timeout. */
export class MetalTimeoutError extends MetalApiError {
  override readonly name = 'MetalTimeoutError';
  readonly code = METAL_API_ERROR_CODES.timeout;
  readonly timeoutMs: number;

  constructor(init: MetalRequestInfo & { timeoutMs: number; cause?: unknown }) {
    super(`${init.operation} (${init.method} ${init.path}) timed out after ${init.timeoutMs} ms`, init, { cause: init.cause });
    this.timeoutMs = init.timeoutMs;
  }

  protected override details(): Record<string, unknown> {
    return { timeoutMs: this.timeoutMs };
  }
}

/** The caller's AbortSignal fired (shutdown, lost leadership); never retried. */
export class MetalAbortedError extends MetalApiError {
  override readonly name = 'MetalAbortedError';
  readonly code = METAL_API_ERROR_CODES.aborted;

  constructor(init: MetalRequestInfo & { cause?: unknown }) {
    super(`${init.operation} (${init.method} ${init.path}) was aborted by the caller`, init, { cause: init.cause });
  }
}

/** A 2xx answer whose body is not the JSON shape the spec promises. */
export class MetalInvalidResponseError extends MetalApiError {
  override readonly name = 'MetalInvalidResponseError';
  readonly code = METAL_API_ERROR_CODES.invalidResponse;
  readonly status: number;

  constructor(init: MetalRequestInfo & { status: number; problem: string; cause?: unknown }) {
    super(`${init.operation} (${init.method} ${init.path}) returned an unexpected body: ${init.problem}`, init, {
      cause: init.cause,
    });
    this.status = init.status;
  }

  protected override details(): Record<string, unknown> {
    return { status: this.status };
  }
}

export function isMetalApiError(err: unknown): err is MetalApiError {
  return err instanceof MetalApiError;
}

/** True for an HTTP error, optionally with one of the given statuses (`isMetalHttpError(err, 404)`). */
export function isMetalHttpError(err: unknown, ...statuses: number[]): err is MetalHttpError {
  return err instanceof MetalHttpError && (statuses.length === 0 || statuses.includes(err.status));
}

function describeCause(cause: unknown): unknown {
  if (cause instanceof MetalApiError) return cause.toJSON();
  // isNativeError, not instanceof: fetch's errors may come from another realm (vm contexts, tests).
  if (isNativeError(cause)) {
    return {
      name: cause.name,
      message: cause.message,
      ...('code' in cause && typeof cause.code === 'string' ? { code: cause.code } : {}),
      ...(cause.cause === undefined ? {} : { cause: describeCause(cause.cause) }),
    };
  }
  return String(cause);
}
