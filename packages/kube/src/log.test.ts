import { PassThrough } from 'node:stream';
import { describe, expect, test } from '@jest/globals';
import { KubeApiError } from './errors.js';
import { createLogger, errorFields, parseLogLevel, redactValue } from './log.js';

function capture(level: string | number = 'debug'): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
  const logger = createLogger({ level, stream });
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  test('writes one JSON object per line with ts, level, msg and the fields', () => {
    const { logger, lines } = capture();
    logger.child({ controller: 'pool' }).info('allocated addresses', { pool: 'ns/p', count: 3 });
    const [line] = lines();
    expect(line).toMatchObject({ level: 'info', msg: 'allocated addresses', controller: 'pool', pool: 'ns/p', count: 3 });
    expect(typeof line?.['ts']).toBe('string');
  });

  test.each<[string | number, string]>([
    ['error', 'error'],
    ['warn', 'warn'],
    ['INFO', 'info'],
    ['debug', 'debug'],
    [0, 'info'],
    ['2', 'info'],
    [3, 'info'],
    [4, 'debug'],
    ['5', 'debug'],
  ])('log level %p reads as %s', (input, want) => {
    expect(parseLogLevel(input)).toBe(want);
  });

  test('an unknown level is refused', () => {
    expect(() => parseLogLevel('loud')).toThrow('invalid log level');
  });

  test('debug lines appear only at verbosity 4 and above', () => {
    const quiet = capture(2);
    quiet.logger.debug('detail');
    quiet.logger.info('state change');
    expect(quiet.lines().map((l) => l['msg'])).toEqual(['state change']);
    const verbose = capture(4);
    verbose.logger.debug('detail');
    expect(verbose.lines().map((l) => l['msg'])).toEqual(['detail']);
  });
});

describe('redaction', () => {
  const token = 'tok-3f9a1c7e5d';

  test('credentials never reach the output, at any depth and in any case', () => {
    const { logger, lines } = capture();
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: 'ns' },
      data: { apiToken: Buffer.from(token).toString('base64') },
    };
    logger.info('request', {
      headers: { 'X-Auth-Token': token, Authorization: `Bearer ${token}` },
      apiToken: token,
      nested: { deeper: { password: token, list: [{ token }] } },
      secret,
      note: `called with Bearer ${token}`,
    });
    const text = JSON.stringify(lines());
    expect(text).not.toContain(token);
    expect(text).not.toContain(Buffer.from(token).toString('base64'));
    expect(lines()[0]).toMatchObject({
      headers: { 'X-Auth-Token': '[REDACTED]', Authorization: '[REDACTED]' },
      secret: { kind: 'Secret', metadata: { name: 'creds' }, data: { apiToken: '[REDACTED]' } },
      note: 'called with Bearer [REDACTED]',
    });
  });

  test('the caller’s objects are left untouched', () => {
    const fields = { headers: { authorization: 'Bearer x' }, secret: { kind: 'Secret', data: { k: 'dg==' } } };
    const copy = structuredClone(fields);
    redactValue({ value: fields });
    expect(fields).toEqual(copy);
  });

  test('the last-applied annotation of a Secret is masked too', () => {
    const out = redactValue({
      value: {
        kind: 'Secret',
        metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"k":"c2VjcmV0"}}', keep: 'me' } },
      },
    });
    expect(out).toEqual({
      kind: 'Secret',
      metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '[REDACTED]', keep: 'me' } },
    });
  });

  test('cycles do not hang the logger', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a['self'] = a;
    expect(redactValue({ value: a })).toEqual({ name: 'a', self: '[circular]' });
  });
});

describe('errorFields', () => {
  test('renders name, code, status, reason and the cause chain', () => {
    const root = new Error('socket hang up');
    const api = new KubeApiError({
      action: 'patch status of InClusterIPPool ns/p',
      status: 409,
      reason: 'Conflict',
      detail: 'the object has been modified',
      cause: root,
    });
    const wrapped = new Error('allocate addresses for pool ns/p', { cause: api });
    expect(errorFields(wrapped)).toEqual({
      name: 'Error',
      message: 'allocate addresses for pool ns/p',
      cause: {
        name: 'KubeApiError',
        code: 'KubeApiError',
        status: 409,
        reason: 'Conflict',
        action: 'patch status of InClusterIPPool ns/p',
        message: 'patch status of InClusterIPPool ns/p: the object has been modified',
        cause: { name: 'Error', message: 'socket hang up' },
      },
    });
  });

  test('errors logged as fields are rendered, not lost as {}', () => {
    const { logger, lines } = capture();
    logger.warn('reconcile failed', { err: new Error('boom', { cause: 'Bearer abc.def' }) });
    expect(lines()[0]?.['err']).toEqual({ name: 'Error', message: 'boom', cause: { message: 'Bearer [REDACTED]' } });
  });
});
