// The one class of client-node's generated API needed here: its package index would load all of it.
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';

/**
 * The closed set of API failures callers branch on. Anything the API server says that is not
 * listed ends as `Unknown`, so a new server reason never breaks a `switch`.
 */
export type KubeApiErrorReason =
  | 'NotFound'
  | 'Conflict'
  | 'AlreadyExists'
  | 'Invalid'
  | 'Gone'
  | 'Forbidden'
  | 'Unauthorized'
  | 'TooManyRequests'
  | 'ServerError'
  /** No answer within the client's request timeout (KubeClientOptions.requestTimeoutMs). */
  | 'Timeout'
  | 'Unknown';

/** One entry of a metav1.Status `details.causes` list (field validation failures, mostly). */
export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

export interface KubeApiErrorOptions {
  /** What was attempted, e.g. "create IPAddress ns/name". Becomes the start of the message. */
  readonly action: string;
  /** HTTP status; 0 when no response arrived (network failure, abort). */
  readonly status: number;
  readonly reason: KubeApiErrorReason;
  /** The server's explanation (metav1.Status message) or the transport error's message. */
  readonly detail: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterMs?: number;
  readonly cause?: unknown;
}

/**
 * Every failure of a call to the API server, translated once at the client boundary so that no
 * caller reads raw status codes or client-node's ApiException.
 */
export class KubeApiError extends Error {
  readonly code = 'KubeApiError';
  override readonly name = 'KubeApiError';
  readonly status: number;
  readonly reason: KubeApiErrorReason;
  readonly causes: readonly StatusCause[];
  readonly action: string;
  /** From a Retry-After header or Status details.retryAfterSeconds (429, some 5xx). */
  readonly retryAfterMs: number | undefined;

  constructor(options: KubeApiErrorOptions) {
    super(`${options.action}: ${options.detail}`, { cause: options.cause });
    this.status = options.status;
    this.reason = options.reason;
    this.causes = options.causes ?? [];
    this.action = options.action;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * Marks a failure only a user edit can fix (an invalid spec, a missing referenced object the user
 * must create). The controller logs and counts it, and does not retry; the reconciler should
 * also report it in a condition.
 */
export class TerminalError extends Error {
  readonly code = 'TerminalError';
  override readonly name = 'TerminalError';
  /** A PascalCase condition reason a reconciler may surface, when it has one. */
  readonly reason: string | undefined;

  constructor(message: string, options: { reason?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.reason = options.reason;
  }
}

const statusReasons: Readonly<Record<string, KubeApiErrorReason>> = {
  NotFound: 'NotFound',
  Conflict: 'Conflict',
  AlreadyExists: 'AlreadyExists',
  Invalid: 'Invalid',
  Gone: 'Gone',
  // A continue token or watch resourceVersion that is too old: the cure is the same as for Gone.
  Expired: 'Gone',
  Forbidden: 'Forbidden',
  Unauthorized: 'Unauthorized',
  TooManyRequests: 'TooManyRequests',
  InternalError: 'ServerError',
  ServerTimeout: 'ServerError',
  Timeout: 'ServerError',
  ServiceUnavailable: 'ServerError',
};

function reasonFromHttpStatus(status: number): KubeApiErrorReason {
  switch (status) {
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 409:
      return 'Conflict';
    case 410:
      return 'Gone';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    default:
      return status >= 500 ? 'ServerError' : 'Unknown';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The parts of a metav1.Status we use, read defensively from whatever the server sent. */
interface ParsedStatus {
  readonly message: string | undefined;
  readonly reason: string | undefined;
  readonly code: number | undefined;
  readonly causes: readonly StatusCause[];
  readonly retryAfterSeconds: number | undefined;
}

/** Reads a metav1.Status from a parsed JSON value or a JSON string; undefined when it is none. */
export function parseStatus(body: unknown): ParsedStatus | undefined {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body) as unknown;
    } catch {
      return undefined;
    }
  }
  if (!isRecord(value) || value['kind'] !== 'Status') return undefined;
  const details = isRecord(value['details']) ? value['details'] : {};
  const rawCauses = Array.isArray(details['causes']) ? (details['causes'] as unknown[]) : [];
  const causes = rawCauses.filter(isRecord).map((c) => ({
    ...(typeof c['reason'] === 'string' ? { reason: c['reason'] } : {}),
    ...(typeof c['message'] === 'string' ? { message: c['message'] } : {}),
    ...(typeof c['field'] === 'string' ? { field: c['field'] } : {}),
  }));
  return {
    message: typeof value['message'] === 'string' ? value['message'] : undefined,
    reason: typeof value['reason'] === 'string' ? value['reason'] : undefined,
    code: typeof value['code'] === 'number' ? value['code'] : undefined,
    causes,
    retryAfterSeconds: typeof details['retryAfterSeconds'] === 'number' ? details['retryAfterSeconds'] : undefined,
  };
}

function parseRetryAfterHeader(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/**
 * Builds the error for a non-2xx response. `body` is the response body (string or parsed JSON),
 * normally a metav1.Status whose `reason` is more precise than the status code (a 409 is either
 * Conflict or AlreadyExists).
 */
export function kubeApiErrorFromResponse(response: {
  action: string;
  status: number;
  body: unknown;
  retryAfter?: string | undefined;
  cause?: unknown;
}): KubeApiError {
  const parsed = parseStatus(response.body);
  const status = response.status || parsed?.code || 0;
  const reason = (parsed?.reason !== undefined ? statusReasons[parsed.reason] : undefined) ?? reasonFromHttpStatus(status);
  const retryAfterMs =
    parseRetryAfterHeader(response.retryAfter) ?? (parsed?.retryAfterSeconds !== undefined ? parsed.retryAfterSeconds * 1000 : undefined);
  const detail =
    parsed?.message ?? (typeof response.body === 'string' && response.body !== '' ? response.body.slice(0, 500) : `HTTP ${status}`);
  return new KubeApiError({
    action: response.action,
    status,
    reason,
    detail,
    causes: parsed?.causes ?? [],
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    cause: response.cause,
  });
}

/**
 * Translates anything a Kubernetes call threw into a KubeApiError naming what was attempted.
 * A KubeApiError passes through unchanged (it already names its action); client-node's
 * ApiException is read through its status code and Status body; anything else (network errors,
 * aborts) becomes status 0 / Unknown with the original as `cause`.
 */
export function toKubeApiError(err: unknown, action: string): KubeApiError {
  if (err instanceof KubeApiError) return err;
  if (err instanceof ApiException) {
    const headers: Record<string, string> = isRecord(err.headers) ? err.headers : {};
    return kubeApiErrorFromResponse({ action, status: err.code, body: err.body, retryAfter: headers['retry-after'], cause: err });
  }
  const detail = err instanceof Error ? err.message : String(err);
  return new KubeApiError({ action, status: 0, reason: 'Unknown', detail, cause: err });
}

function hasReason(err: unknown, reason: KubeApiErrorReason): boolean {
  return err instanceof KubeApiError && err.reason === reason;
}

export function isKubeApiError(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError;
}
export function isNotFound(err: unknown): boolean {
  return hasReason(err, 'NotFound');
}
export function isConflict(err: unknown): boolean {
  return hasReason(err, 'Conflict');
}
export function isAlreadyExists(err: unknown): boolean {
  return hasReason(err, 'AlreadyExists');
}
export function isTimeout(err: unknown): boolean {
  return hasReason(err, 'Timeout');
}
export function isGone(err: unknown): boolean {
  return hasReason(err, 'Gone');
}
export function isInvalid(err: unknown): boolean {
  return hasReason(err, 'Invalid');
}
export function isForbidden(err: unknown): boolean {
  return hasReason(err, 'Forbidden');
}
export function isTooManyRequests(err: unknown): boolean {
  return hasReason(err, 'TooManyRequests');
}
/** A TerminalError itself or anywhere along `err`'s cause chain (callers wrap it with context). */
export function isTerminalError(err: unknown): boolean {
  return terminalErrorIn(err) !== undefined;
}

/** The TerminalError behind `err`, itself or along its causes. */
export function terminalErrorIn(err: unknown): TerminalError | undefined {
  const seen = new Set<unknown>();
  for (let at: unknown = err; at instanceof Error && !seen.has(at); at = at.cause) {
    if (at instanceof TerminalError) return at;
    seen.add(at);
  }
  return undefined;
}
