import { describe, expect, test } from '@jest/globals';
import { ApiException } from '@kubernetes/client-node';
import {
  isAlreadyExists,
  isConflict,
  isGone,
  isInvalid,
  isNotFound,
  KubeApiError,
  kubeApiErrorFromResponse,
  toKubeApiError,
} from './errors.js';

function status(code: number, reason: string, message: string, details: Record<string, unknown> = {}): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, details });
}

describe('toKubeApiError', () => {
  test.each<[string, number, string, string]>([
    ['404 NotFound', 404, 'NotFound', 'NotFound'],
    ['409 Conflict', 409, 'Conflict', 'Conflict'],
    ['409 AlreadyExists', 409, 'AlreadyExists', 'AlreadyExists'],
    ['410 Expired continue token', 410, 'Expired', 'Gone'],
    ['422 Invalid', 422, 'Invalid', 'Invalid'],
    ['429', 429, 'TooManyRequests', 'TooManyRequests'],
    ['500 InternalError', 500, 'InternalError', 'ServerError'],
    ['an unknown reason falls back to the status code', 403, 'SomethingNew', 'Forbidden'],
  ])('%s', (_name, code, reason, want) => {
    const err = toKubeApiError(new ApiException(code, 'HTTP', status(code, reason, 'msg'), {}), 'get X ns/n');
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err.reason).toBe(want);
    expect(err.status).toBe(code);
    expect(err.message).toBe('get X ns/n: msg');
    expect(err.cause).toBeInstanceOf(ApiException);
  });

  test('Invalid carries the field causes', () => {
    const body = status(422, 'Invalid', 'spec.prefix: Required value', {
      causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.prefix' }],
    });
    const err = toKubeApiError(new ApiException(422, 'HTTP', body, {}), 'create InClusterIPPool ns/p');
    expect(isInvalid(err)).toBe(true);
    expect(err.causes).toEqual([{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.prefix' }]);
  });

  test('a body that is not a Status still yields a usable error', () => {
    const err = toKubeApiError(new ApiException(502, 'Bad Gateway', '<html>oops</html>', {}), 'list X');
    expect(err.reason).toBe('ServerError');
    expect(err.message).toBe('list X: <html>oops</html>');
  });

  test('a network error becomes Unknown with status 0 and keeps its cause', () => {
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:6443');
    const err = toKubeApiError(cause, 'get X ns/n');
    expect(err).toMatchObject({ status: 0, reason: 'Unknown', action: 'get X ns/n' });
    expect(err.cause).toBe(cause);
  });

  test('a KubeApiError passes through with its own action', () => {
    const original = kubeApiErrorFromResponse({ action: 'patch X ns/n', status: 409, body: status(409, 'Conflict', 'modified') });
    expect(toKubeApiError(original, 'something else')).toBe(original);
  });

  test('Retry-After is read from the header or the Status details', () => {
    expect(kubeApiErrorFromResponse({ action: 'a', status: 429, body: '', retryAfter: '3' }).retryAfterMs).toBe(3000);
    expect(
      kubeApiErrorFromResponse({ action: 'a', status: 429, body: status(429, 'TooManyRequests', 'slow', { retryAfterSeconds: 2 }) })
        .retryAfterMs,
    ).toBe(2000);
  });

  test('predicates look at the reason only', () => {
    const e = (reason: string, code: number): KubeApiError =>
      kubeApiErrorFromResponse({ action: 'a', status: code, body: status(code, reason, 'm') });
    expect(isNotFound(e('NotFound', 404))).toBe(true);
    expect(isConflict(e('AlreadyExists', 409))).toBe(false);
    expect(isAlreadyExists(e('AlreadyExists', 409))).toBe(true);
    expect(isGone(e('Gone', 410))).toBe(true);
    expect(isNotFound(new Error('NotFound'))).toBe(false);
  });
});
