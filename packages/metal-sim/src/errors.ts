// One error type for every refusal a handler makes. The server turns it into the API's error body:
// 422 answers carry `{"errors": [...]}` (the docs' validation format), the others `{"error": "..."}`.

import type { RuleViolation } from './rules/rule.js';

export type SimErrorCode = 'unauthorized' | 'forbidden' | 'not_found' | 'unprocessable' | 'bad_request';

const STATUS: Record<SimErrorCode, number> = {
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  unprocessable: 422,
  bad_request: 400,
};

export class SimError extends Error {
  override readonly name = 'SimError';
  readonly status: number;

  constructor(
    readonly code: SimErrorCode,
    readonly messages: readonly string[],
    /** The rule that refused, when a rule did; tests and the request log show it. */
    readonly rule?: string,
  ) {
    super(messages.join('; '));
    this.status = STATUS[code];
  }

  /** The wire body: the spec's `Error` schema. */
  toBody(): { error: string } | { errors: string[] } {
    return this.code === 'unprocessable' ? { errors: [...this.messages] } : { error: this.message };
  }
}

export function unprocessable(message: string): SimError {
  return new SimError('unprocessable', [message]);
}

/** Malformed input to the simulator's own endpoints (/_sim): the API's 422 stays for API calls. */
export function badRequest(message: string): SimError {
  return new SimError('bad_request', [message]);
}

export function notFound(what = 'Not found'): SimError {
  return new SimError('not_found', [what]);
}

export function forbidden(message = 'You are not authorized to view this project'): SimError {
  return new SimError('forbidden', [message]);
}

export function unauthorized(): SimError {
  return new SimError('unauthorized', ['Invalid authentication token']);
}

/** Throws the violation as a 422, naming the rule. */
export function enforce(violation: RuleViolation | null): void {
  if (violation !== null) throw new SimError('unprocessable', [violation.message], violation.rule);
}
