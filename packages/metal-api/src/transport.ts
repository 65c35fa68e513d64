// The one place that talks HTTP to Metal: auth header, client-side rate limit, per-attempt timeout,
// retries with backoff and Retry-After, error translation, logs and metrics. Resource modules
// describe operations (operationId, method, path, body, decoder) and hand them to `send`.
//
// The token lives only in this closure. It is not a property of any object we return, it is never
// logged, and text the server sends back is scrubbed of it before it reaches an error.

import { isNativeError } from 'node:util/types';

import { DecodeProblem, isRecord } from './decode.js';
import { MetalAbortedError, MetalHttpError, MetalInvalidResponseError, MetalNetworkError, MetalTimeoutError } from './errors.js';
import type { MetalApiError, MetalRequestInfo } from './errors.js';
import { silentLogger } from './observer.js';
import type { AttemptStatus, MetalApiObserver, MetalLogger } from './observer.js';
import { DEFAULT_RATE_LIMIT, TokenBucket } from './rate-limit.js';
import type { RateLimitOptions } from './rate-limit.js';
import { DEFAULT_RETRY_POLICY, decideRetry, parseRetryAfterMs } from './retry.js';
import type { AttemptFailure, RetryPolicy } from './retry.js';
import { systemTime } from './retry.js';
import type { TimeSource } from './retry.js';

export const DEFAULT_BASE_URL = 'https://api.equinix.com/metal/v1';
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Larger than any page the client asks for (1,000 devices with their ports is a few MB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/** How much of the server's own text an error keeps, per message, after the token is scrubbed. */
const MAX_SERVER_TEXT = 200;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Query values: arrays repeat the key (`types=a&types=b`); join them yourself for comma lists. */
export type QueryValue = string | number | boolean | readonly string[] | undefined;

/** One Metal API operation, ready to send. */
export interface MetalRequest<T> {
  /** The spec's operationId; names the call in errors, logs and metrics. */
  operation: string;
  method: HttpMethod;
  /** Below the base URL, path parameters already encoded (use `apiPath`). */
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Turns the parsed JSON body (undefined when empty) into the result; throws DecodeProblem. */
  decode: (body: unknown) => T;
  /**
   * Whether repeating after the server may have acted is harmless; defaults to true for GET, PUT
   * and DELETE and false for POST and PATCH. See RetryQuestion.isIdempotent.
   */
  isIdempotent?: boolean;
  signal?: AbortSignal;
  /** Logs this call here instead of the client's logger (a reconcile's, carrying its reconcileID). */
  logger?: MetalLogger;
}

export interface MetalTransportOptions {
  /** User or project API key, sent as X-Auth-Token. */
  token: string;
  baseUrl?: string;
  /** Per attempt, covering connect, headers and body. */
  timeoutMs?: number;
  /** A longer body ends the call (MetalInvalidResponseError) instead of filling memory. */
  maxResponseBytes?: number;
  retry?: Partial<RetryPolicy>;
  /** `false` turns the client-side limit off (tests, or a limit enforced elsewhere). */
  rateLimit?: RateLimitOptions | false;
  logger?: MetalLogger;
  observer?: MetalApiObserver;
  time?: TimeSource;
  userAgent?: string;
}

export interface MetalTransport {
  readonly baseUrl: string;
  send<T>(request: MetalRequest<T>): Promise<T>;
}

/** Builds a path from a template, percent-encoding every interpolated value. */
export function apiPath(strings: TemplateStringsArray, ...values: readonly (string | number)[]): string {
  return strings.reduce((out, part, i) => out + part + (i < values.length ? encodeURIComponent(String(values[i])) : ''), '');
}

type AttemptResult<T> = { kind: 'ok'; value: T } | { kind: 'failed'; error: MetalApiError; failure?: AttemptFailure };

/** Creates the transport. Nothing is sent until `send` is called. */
export function createTransport(options: MetalTransportOptions): MetalTransport {
  if (options.token === '') throw new Error('metal api token is empty');
  const token = options.token;
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const time = options.time ?? systemTime;
  const logger = options.logger ?? silentLogger;
  const observer = options.observer ?? {};
  const userAgent = options.userAgent ?? 'metal-l2';
  const limiter = options.rateLimit === false ? undefined : new TokenBucket(options.rateLimit ?? DEFAULT_RATE_LIMIT, time);

  const redact = (text: string): string => text.split(token).join('[REDACTED]');
  // Scrub first, then cut: cutting first could keep the start of a token that straddles the cut.
  const serverText = (text: string): string => redact(text).trim().slice(0, MAX_SERVER_TEXT);

  async function send<T>(request: MetalRequest<T>): Promise<T> {
    const startedAt = time.now();
    const isIdempotent = request.isIdempotent ?? ['GET', 'PUT', 'DELETE'].includes(request.method);
    const info = (attempts: number): MetalRequestInfo => ({
      operation: request.operation,
      method: request.method,
      path: request.path,
      attempts,
    });
    const finish = (attempts: number, error?: MetalApiError): void => {
      observer.callFinished?.({
        operation: request.operation,
        method: request.method,
        attempts,
        durationMs: time.now() - startedAt,
        outcome: error === undefined ? 'ok' : error.code,
        ...(error === undefined ? {} : { error }),
      });
    };

    for (let attempt = 1; ; attempt += 1) {
      const waited = await waitForToken(request, info(attempt - 1));
      if (waited.kind === 'failed') {
        finish(attempt - 1, waited.error);
        throw waited.error;
      }
      const result = await attemptOnce(request, info(attempt));
      if (result.kind === 'ok') {
        finish(attempt);
        return result.value;
      }
      const decision =
        result.failure === undefined
          ? ({ kind: 'stop' } as const)
          : decideRetry({ failure: result.failure, attempt, policy, isIdempotent, random: () => time.random() });
      if (decision.kind === 'stop') {
        finish(attempt, result.error);
        throw result.error;
      }
      observer.retryScheduled?.({
        operation: request.operation,
        method: request.method,
        attempt,
        reason: decision.reason,
        delayMs: decision.delayMs,
      });
      (request.logger ?? logger).warn('metal api request will be retried', {
        operation: request.operation,
        method: request.method,
        path: request.path,
        attempt,
        reason: decision.reason,
        delayMs: decision.delayMs,
        ...(result.error instanceof MetalHttpError ? { status: result.error.status } : {}),
      });
      try {
        await time.sleep(decision.delayMs, request.signal);
      } catch (err: unknown) {
        const aborted = new MetalAbortedError({ ...info(attempt), cause: err });
        finish(attempt, aborted);
        throw aborted;
      }
    }
  }

  async function waitForToken(
    request: MetalRequest<unknown>,
    soFar: MetalRequestInfo,
  ): Promise<{ kind: 'ok' } | { kind: 'failed'; error: MetalApiError }> {
    if (limiter === undefined) return { kind: 'ok' };
    try {
      const waitMs = await limiter.take(request.signal);
      if (waitMs > 0) observer.rateLimitWaited?.({ operation: request.operation, waitMs });
      return { kind: 'ok' };
    } catch (err: unknown) {
      return { kind: 'failed', error: new MetalAbortedError({ ...soFar, cause: err }) };
    }
  }

  async function attemptOnce<T>(request: MetalRequest<T>, at: MetalRequestInfo): Promise<AttemptResult<T>> {
    if (request.signal?.aborted === true) {
      return { kind: 'failed', error: new MetalAbortedError({ ...at, cause: request.signal.reason }) };
    }
    const startedAt = time.now();
    const report = (status: AttemptStatus): void => {
      const durationMs = time.now() - startedAt;
      observer.attemptFinished?.({ operation: at.operation, method: at.method, attempt: at.attempts, status, durationMs });
      (request.logger ?? logger).debug('metal api request', {
        operation: at.operation,
        method: at.method,
        path: at.path,
        status,
        attempt: at.attempts,
        durationMs,
      });
    };
    // A real timer, not the injectable clock: this bounds real socket I/O.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), timeoutMs);
    const signal = request.signal === undefined ? deadline.signal : AbortSignal.any([request.signal, deadline.signal]);
    let status: number | undefined;
    try {
      const response = await fetch(urlFor(request), {
        method: request.method,
        headers: headersFor(request),
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        // Following a redirect would send X-Auth-Token wherever the Location points.
        redirect: 'manual',
        signal,
      });
      status = response.status;
      if (status >= 300 && status < 400) {
        await response.body?.cancel();
        report(status);
        const location = response.headers.get('location');
        const refused = serverText(`refused a redirect${location === null ? '' : ` to ${location}`}`);
        // Not retried: asking again gets the same redirect.
        return { kind: 'failed', error: new MetalHttpError({ ...at, status, apiErrors: [refused] }) };
      }
      const text = await readBody(response, maxResponseBytes);
      report(response.status);
      if (text === undefined) {
        return {
          kind: 'failed',
          error: new MetalInvalidResponseError({
            ...at,
            status: response.status,
            problem: `the response body is larger than ${maxResponseBytes} bytes`,
          }),
        };
      }
      if (response.ok) return decodeSuccess(request, at, { status: response.status, text });
      const retryAfterMs = parseRetryAfterMs(response.headers.get('retry-after'), time.now());
      const error = new MetalHttpError({ ...at, status: response.status, apiErrors: apiErrorsOf(text), retryAfterMs });
      return { kind: 'failed', error, failure: { kind: 'status', status: response.status, retryAfterMs } };
    } catch (err: unknown) {
      // Read through a function: TypeScript would keep the narrowing from before the await.
      if (isAborted(request.signal)) {
        report('aborted');
        return { kind: 'failed', error: new MetalAbortedError({ ...at, cause: err }) };
      }
      if (deadline.signal.aborted) {
        report('timeout');
        return { kind: 'failed', error: new MetalTimeoutError({ ...at, timeoutMs, cause: err }), failure: { kind: 'timeout' } };
      }
      // Also when the connection broke while the body was being read: no complete answer arrived.
      report('network');
      return {
        kind: 'failed',
        error: new MetalNetworkError({ ...at, cause: err }),
        failure: { kind: 'network', neverSent: status === undefined && isConnectionRefused(err) },
      };
    } finally {
      clearTimeout(timer);
    }
  }

  function decodeSuccess<T>(request: MetalRequest<T>, at: MetalRequestInfo, response: { status: number; text: string }): AttemptResult<T> {
    const invalid = (problem: string, cause?: unknown): AttemptResult<T> => ({
      kind: 'failed',
      error: new MetalInvalidResponseError({ ...at, status: response.status, problem: redact(problem), cause }),
    });
    let body: unknown;
    if (response.text.trim() !== '') {
      try {
        body = JSON.parse(response.text);
      } catch (err: unknown) {
        return invalid('not JSON', err);
      }
    }
    try {
      return { kind: 'ok', value: request.decode(body) };
    } catch (err: unknown) {
      if (err instanceof DecodeProblem) return invalid(err.message);
      throw err;
    }
  }

  function apiErrorsOf(text: string): string[] {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: an intermediary (load balancer, proxy) answered. Keep a short excerpt.
      const excerpt = serverText(text);
      return excerpt === '' ? [] : [excerpt];
    }
    const messages: string[] = [];
    if (isRecord(parsed)) {
      if (typeof parsed['error'] === 'string') messages.push(parsed['error']);
      const errors = parsed['errors'];
      if (Array.isArray(errors)) messages.push(...errors.filter((e): e is string => typeof e === 'string'));
    }
    return messages.map(serverText);
  }

  function urlFor(request: MetalRequest<unknown>): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value === undefined) continue;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') params.append(key, String(value));
      else for (const item of value) params.append(key, item);
    }
    const query = params.toString();
    return `${baseUrl}${request.path}${query === '' ? '' : `?${query}`}`;
  }

  function headersFor(request: MetalRequest<unknown>): Record<string, string> {
    return {
      'X-Auth-Token': token,
      Accept: 'application/json',
      'User-Agent': userAgent,
      ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
    };
  }

  return { baseUrl, send };
}

/**
 * The body as text, or undefined once it is longer than `maxBytes` (declared or as it streams in;
 * the rest is not read and the connection is released).
 */
async function readBody(response: Response, maxBytes: number): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    return undefined;
  }
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = response.body.getReader();
  for (;;) {
    const chunk: { done: boolean; value?: unknown } = await reader.read();
    if (chunk.done) break;
    const value = chunk.value;
    // fetch's body yields bytes; the DOM typings say any.
    if (!(value instanceof Uint8Array)) throw new TypeError('response body yielded something other than bytes');
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

/** ECONNREFUSED (possibly one per address family inside an AggregateError): nothing reached the server. */
function isConnectionRefused(err: unknown): boolean {
  const codes = errorCodes(err);
  return codes.length > 0 && codes.every((code) => code === 'ECONNREFUSED');
}

// isNativeError rather than instanceof: undici's errors can come from another realm.
function errorCodes(err: unknown): string[] {
  if (!isNativeError(err)) return [];
  if ('errors' in err && Array.isArray(err.errors)) return err.errors.flatMap(errorCodes);
  if ('code' in err && typeof err.code === 'string') return [err.code];
  return errorCodes(err.cause);
}

// ---- Options every resource method accepts, and how they become query parameters ----

export interface CallOptions {
  /** Cancels the call, waits included (shutdown, lost leadership). */
  signal?: AbortSignal;
}

/** `include`/`exclude`: expand or collapse nested objects (dotted, up to 3 levels). */
export interface IncludeOptions extends CallOptions {
  include?: readonly string[];
  exclude?: readonly string[];
}

/** The spec declares include/exclude with `explode: false`: one comma-separated value. */
export function includeQuery(options: IncludeOptions | undefined): Record<string, QueryValue> {
  return {
    include: options?.include === undefined || options.include.length === 0 ? undefined : options.include.join(','),
    exclude: options?.exclude === undefined || options.exclude.length === 0 ? undefined : options.exclude.join(','),
  };
}

/** Only the signal, without dropping the property under exactOptionalPropertyTypes. */
export function signalOf(options: CallOptions | undefined): { signal?: AbortSignal } {
  return options?.signal === undefined ? {} : { signal: options.signal };
}
