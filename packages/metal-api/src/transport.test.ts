import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { createMetalClient } from './client.js';
import type { MetalClient, MetalClientOptions } from './client.js';
import {
  MetalAbortedError,
  MetalHttpError,
  MetalInvalidResponseError,
  MetalNetworkError,
  MetalTimeoutError,
  isMetalHttpError,
} from './errors.js';
import type { AttemptFinished, CallFinished, RetryScheduled } from './observer.js';
import { drop, fakeTime, hang, json, raw, refusedBaseUrl, startTestServer } from './testing/http-server.js';
import type { Answer, FakeTime, TestServer } from './testing/http-server.js';

const TOKEN = 'test-token-7f3a9c';

let server: TestServer;
let time: FakeTime;
let events: { attempts: AttemptFinished[]; retries: RetryScheduled[]; calls: CallFinished[] };

beforeEach(async () => {
  server = await startTestServer();
  time = fakeTime();
  events = { attempts: [], retries: [], calls: [] };
});
afterEach(() => server.close());

function client(options: Partial<MetalClientOptions> = {}): MetalClient {
  return createMetalClient({
    token: TOKEN,
    baseUrl: server.baseUrl,
    time,
    rateLimit: false,
    retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 30_000 },
    observer: {
      attemptFinished: (e) => events.attempts.push(e),
      retryScheduled: (e) => events.retries.push(e),
      callFinished: (e) => events.calls.push(e),
    },
    ...options,
  });
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err: unknown) {
    return err;
  }
  throw new Error('expected the call to fail');
}

describe('requests', () => {
  test('carry the token, JSON headers, the encoded path, the query and the body', async () => {
    server.answer(json(200, { id: 'port-1', name: 'bond0' }));
    const port = await client().ports.bond('port 1/x', { bulk: true, include: ['virtual_networks', 'native_virtual_network'] });
    expect(port).toEqual({ id: 'port-1', name: 'bond0' });
    expect(server.requests).toEqual([
      expect.objectContaining({
        method: 'POST',
        url: '/metal/v1/ports/port%201%2Fx/bond?include=virtual_networks%2Cnative_virtual_network&bulk_enable=true',
        body: '',
      }),
    ]);
    expect(server.requests[0]?.headers).toMatchObject({ 'x-auth-token': TOKEN, accept: 'application/json' });
    expect(server.requests[0]?.headers['content-type']).toBeUndefined();
  });

  test('send JSON bodies with a content type', async () => {
    server.answer(json(201, { id: 'vlan-1', vxlan: 1000 }));
    await client().virtualNetworks.create('project-1', { metro: 'da', vxlan: 1000, description: 'pool' });
    expect(server.requests[0]).toMatchObject({
      method: 'POST',
      url: '/metal/v1/projects/project-1/virtual-networks',
      body: JSON.stringify({ metro: 'da', vxlan: 1000, description: 'pool' }),
    });
    expect(server.requests[0]?.headers['content-type']).toBe('application/json');
  });

  test('the base URL may end with a slash', async () => {
    server.answer(json(200, { id: 'd' }));
    await client({ baseUrl: `${server.baseUrl}/` }).devices.get('d');
    expect(server.requests[0]?.url).toBe('/metal/v1/devices/d');
  });
});

describe('errors', () => {
  test.each([
    {
      name: 'errors[] of a 422',
      answer: json(422, { errors: ['vxlan is taken', 'metro is invalid'] }),
      status: 422,
      apiErrors: ['vxlan is taken', 'metro is invalid'],
    },
    { name: 'error of a 404', answer: json(404, { error: 'Not found' }), status: 404, apiErrors: ['Not found'] },
    {
      name: 'both fields',
      answer: json(403, { error: 'forbidden', errors: ['not a member'] }),
      status: 403,
      apiErrors: ['forbidden', 'not a member'],
    },
    {
      name: 'an HTML page from a proxy',
      answer: raw(400, '<html>Bad Gateway</html>', { 'content-type': 'text/html' }),
      status: 400,
      apiErrors: ['<html>Bad Gateway</html>'],
    },
    { name: 'an empty body', answer: raw(401, ''), status: 401, apiErrors: [] },
  ])('an HTTP error keeps the status and the API text: $name', async ({ answer, status, apiErrors }) => {
    server.answer(answer);
    const err = await failure(client().virtualNetworks.get('vlan-1'));
    expect(err).toBeInstanceOf(MetalHttpError);
    expect(err).toMatchObject({
      code: 'METAL_HTTP',
      status,
      apiErrors,
      operation: 'getVirtualNetwork',
      method: 'GET',
      path: '/virtual-networks/vlan-1',
      attempts: 1,
      retryAfterMs: undefined,
    });
    expect(isMetalHttpError(err, status)).toBe(true);
  });

  test('the message says what was attempted and what the API said', async () => {
    server.answer(json(422, { errors: ['VLAN 1000 is already assigned'] }));
    const err = await failure(client().ports.assign('p1', '1000'));
    expect(err).toHaveProperty('message', 'assignPort (POST /ports/p1/assign) answered HTTP 422: VLAN 1000 is already assigned');
  });

  test.each([
    { name: 'not JSON', answer: raw(200, 'hello'), problem: 'not JSON' },
    { name: 'no id', answer: json(200, { name: 'bond0' }), problem: 'port has no "id"' },
    { name: 'a list where an object belongs', answer: json(200, [{ id: 'x' }]), problem: 'expected port as a JSON object' },
  ])('a 2xx body that is $name is an invalid response, not retried', async ({ answer, problem }) => {
    server.answer(answer);
    const err = await failure(client().ports.get('p1'));
    expect(err).toBeInstanceOf(MetalInvalidResponseError);
    expect(err).toHaveProperty('message', `findPortById (GET /ports/p1) returned an unexpected body: ${problem}`);
    expect(server.requests).toHaveLength(1);
  });

  test('errors serialize for logs with their cause chain', async () => {
    server.answer(drop, drop);
    const err = await failure(client({ retry: { maxAttempts: 2 } }).devices.get('d1'));
    expect(JSON.parse(JSON.stringify(err))).toMatchObject({
      name: 'MetalNetworkError',
      code: 'METAL_NETWORK',
      operation: 'findDeviceById',
      attempts: 2,
      cause: { name: 'TypeError', message: 'fetch failed' },
    });
  });
});

describe('redirects and large answers', () => {
  test('a redirect is refused, not followed: the token goes to no other URL', async () => {
    const elsewhere = await startTestServer();
    try {
      elsewhere.answer(json(200, { id: 'd1' }));
      server.answer(raw(302, '', { location: `${elsewhere.baseUrl}/devices/d1` }));
      const err = await failure(client().devices.get('d1'));
      expect(err).toBeInstanceOf(MetalHttpError);
      expect(err).toMatchObject({ status: 302, apiErrors: [`refused a redirect to ${elsewhere.baseUrl}/devices/d1`] });
      expect(elsewhere.requests).toEqual([]);
      expect(server.requests).toHaveLength(1);
    } finally {
      await elsewhere.close();
    }
  });

  test.each([
    {
      name: 'declared in Content-Length',
      answer: raw(200, JSON.stringify({ id: 'd1', description: 'x'.repeat(4_096) }), { 'content-type': 'application/json' }),
    },
    {
      name: 'streamed without a length',
      answer: ((res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(`{"id":"d1","description":"`);
        for (let i = 0; i < 8; i++) res.write('x'.repeat(1_024));
        res.end('"}');
      }) satisfies Answer,
    },
  ])('a body larger than maxResponseBytes ($name) ends the call, unretried', async ({ answer }) => {
    server.answer(answer, json(200, { id: 'd1' }));
    const err = await failure(client({ maxResponseBytes: 2_048 }).devices.get('d1'));
    expect(err).toBeInstanceOf(MetalInvalidResponseError);
    expect((err as Error).message).toContain('larger than 2048 bytes');
    expect(server.requests).toHaveLength(1);
  });
});

describe('retries', () => {
  test('a 503 is retried after exponential backoff with jitter', async () => {
    server.answer(json(503, { error: 'busy' }), json(502, {}), json(200, { id: 'd1' }));
    await expect(client().devices.get('d1')).resolves.toEqual({ id: 'd1' });
    // Equal jitter with random() = 0.5: base 100 -> 75, then 200 -> 150.
    expect(time.sleeps).toEqual([75, 150]);
    expect(events.retries).toEqual([
      { operation: 'findDeviceById', method: 'GET', attempt: 1, reason: 'server-error', delayMs: 75 },
      { operation: 'findDeviceById', method: 'GET', attempt: 2, reason: 'server-error', delayMs: 150 },
    ]);
    expect(events.attempts.map((a) => a.status)).toEqual([503, 502, 200]);
    expect(events.calls).toEqual([expect.objectContaining({ operation: 'findDeviceById', attempts: 3, outcome: 'ok' })]);
  });

  test('attempts are bounded, and the last error is thrown', async () => {
    server.answer(json(500, {}), json(500, {}), json(500, {}), json(500, { errors: ['still broken'] }), json(200, { id: 'never' }));
    const err = await failure(client().devices.get('d1'));
    expect(err).toMatchObject({ status: 500, attempts: 4, apiErrors: ['still broken'] });
    expect(server.requests).toHaveLength(4);
    expect(time.sleeps).toEqual([75, 150, 300]);
    expect(events.calls).toEqual([expect.objectContaining({ outcome: 'METAL_HTTP', attempts: 4 })]);
  });

  test('backoff is capped at maxDelayMs', async () => {
    server.answer(...Array.from({ length: 6 }, () => json(500, {})));
    await failure(
      client({ retry: { maxAttempts: 6, baseDelayMs: 400, maxDelayMs: 1_000 }, time: fakeTime({ random: 0.999 }) }).devices.get('d'),
    );
    expect(server.requests).toHaveLength(6);
  });

  test.each([
    { name: 'delta-seconds', header: '7', waitMs: 7_000 },
    { name: 'an HTTP date', header: new Date(Date.UTC(2026, 0, 1, 0, 0, 12)).toUTCString(), waitMs: 12_000 },
    { name: 'a date in the past', header: 'Wed, 31 Dec 2025 23:59:00 GMT', waitMs: 0 },
  ])('a 429 waits exactly the Retry-After ($name)', async ({ header, waitMs }) => {
    server.answer(json(429, { error: 'slow down' }, { 'retry-after': header }), json(200, { id: 'd1' }));
    await client().devices.get('d1');
    expect(time.sleeps).toEqual([waitMs]);
    expect(events.retries[0]).toMatchObject({ reason: 'rate-limited', delayMs: waitMs });
  });

  test('a 429 without Retry-After backs off normally', async () => {
    server.answer(json(429, {}), json(200, { id: 'd1' }));
    await client().devices.get('d1');
    expect(time.sleeps).toEqual([75]);
  });

  test('a Retry-After longer than maxRetryAfterMs ends the call with retryAfterMs for the caller', async () => {
    server.answer(json(429, { error: 'quota' }, { 'retry-after': '120' }));
    const err = await failure(client().devices.get('d1'));
    expect(err).toMatchObject({ status: 429, retryAfterMs: 120_000, attempts: 1 });
    expect(time.sleeps).toEqual([]);
  });

  test.each([400, 401, 403, 404, 409, 422])('a %d is never retried', async (status) => {
    server.answer(json(status, { errors: ['no'] }), json(200, { id: 'x' }));
    const err = await failure(client().ports.assign('p1', '1000'));
    expect(err).toMatchObject({ status, attempts: 1 });
    expect(server.requests).toHaveLength(1);
    expect(events.retries).toEqual([]);
  });

  test('a 501 is not retried: asking again will not implement it', async () => {
    server.answer(json(501, {}), json(200, { id: 'x' }));
    await expect(client().devices.get('d')).rejects.toMatchObject({ status: 501 });
    expect(server.requests).toHaveLength(1);
  });

  test('port actions are retried after a 5xx: repeating one cannot create anything', async () => {
    server.answer(json(500, {}), json(200, { id: 'p1' }));
    await client().ports.convertLayer2('p1');
    expect(server.requests.map((r) => r.url)).toEqual(['/metal/v1/ports/p1/convert/layer-2', '/metal/v1/ports/p1/convert/layer-2']);
  });

  test('a create is not repeated after a 5xx: the API may have made the object', async () => {
    server.answer(json(500, {}), json(201, { id: 'vrf-1' }));
    const err = await failure(client().vrfs.create('project-1', { name: 'pool', metro: 'da', ip_ranges: ['10.0.0.0/16'] }));
    expect(err).toMatchObject({ status: 500, attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });

  test('a create is repeated after a 429: the API turned it away unread', async () => {
    server.answer(json(429, {}, { 'retry-after': '1' }), json(201, { id: 'vrf-1' }));
    await expect(client().vrfs.create('project-1', { name: 'pool', metro: 'da' })).resolves.toEqual({ id: 'vrf-1' });
    expect(server.requests).toHaveLength(2);
  });
});

describe('network failures and timeouts', () => {
  test('a dropped connection is a network error, retried for reads', async () => {
    server.answer(drop, json(200, { id: 'd1' }));
    await expect(client().devices.get('d1')).resolves.toEqual({ id: 'd1' });
    expect(events.attempts.map((a) => a.status)).toEqual(['network', 200]);
    expect(events.retries[0]).toMatchObject({ reason: 'network' });
  });

  test('a dropped connection is not retried for a create', async () => {
    server.answer(drop, json(201, { id: 'd1' }));
    const err = await failure(
      client().devices.create('project-1', { metro: 'da', plan: 'c3.small.x86', operating_system: 'ubuntu_24_04' }),
    );
    expect(err).toBeInstanceOf(MetalNetworkError);
    expect(server.requests).toHaveLength(1);
  });

  test('a refused connection is retried even for a create, and ends as a network error', async () => {
    const c = client({ baseUrl: await refusedBaseUrl(), retry: { maxAttempts: 3, baseDelayMs: 100 } });
    const err = await failure(c.vrfs.create('project-1', { name: 'pool', metro: 'da' }));
    expect(err).toBeInstanceOf(MetalNetworkError);
    expect(err).toMatchObject({ attempts: 3, code: 'METAL_NETWORK' });
    expect((err as Error).cause).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
  });

  test('an answer that does not come within timeoutMs is a timeout, retried for reads', async () => {
    server.answer(hang, json(200, { id: 'd1' }));
    await expect(client({ timeoutMs: 150 }).devices.get('d1')).resolves.toEqual({ id: 'd1' });
    expect(events.attempts.map((a) => a.status)).toEqual(['timeout', 200]);
    expect(events.retries[0]).toMatchObject({ reason: 'timeout' });
  });

  test('a timeout ends a create at once', async () => {
    server.answer(hang);
    const err = await failure(
      client({ timeoutMs: 150 }).metalGateways.create('project-1', { virtual_network_id: 'v', ip_reservation_id: 'r' }),
    );
    expect(err).toBeInstanceOf(MetalTimeoutError);
    expect(err).toMatchObject({
      timeoutMs: 150,
      attempts: 1,
      message: 'createMetalGateway (POST /projects/project-1/metal-gateways) timed out after 150 ms',
    });
  });

  test('the caller can abort; nothing is retried', async () => {
    server.answer(hang, json(200, { id: 'd1' }));
    const controller = new AbortController();
    const call = client().devices.get('d1', { signal: controller.signal });
    await waitUntil(() => server.requests.length === 1);
    controller.abort(new Error('shutting down'));
    const err = await failure(call);
    expect(err).toBeInstanceOf(MetalAbortedError);
    expect(server.requests).toHaveLength(1);
    expect(events.calls).toEqual([expect.objectContaining({ outcome: 'METAL_ABORTED' })]);
  });

  test('a client bound to a context: its signal cancels a call made without one, and its logger gets the lines', async () => {
    server.answer(hang, json(200, { id: 'd1' }));
    const controller = new AbortController();
    const lines: string[] = [];
    const log = (message: string): void => {
      lines.push(message);
    };
    const bound = client().withContext({ signal: controller.signal, logger: { debug: log, info: log, warn: log, error: log } });
    const call = bound.devices.get('d1');
    await waitUntil(() => server.requests.length === 1);
    controller.abort(new Error('lost leadership'));
    expect(await failure(call)).toBeInstanceOf(MetalAbortedError);
    expect(lines).toEqual(['metal api request']);
    // The context's signal stays on every later call made through the bound client.
    expect(await failure(bound.vrfs.get('v1'))).toBeInstanceOf(MetalAbortedError);
    expect(server.requests).toHaveLength(1);
  });

  test('an already aborted signal sends nothing', async () => {
    const err = await failure(client().devices.get('d1', { signal: AbortSignal.abort() }));
    expect(err).toBeInstanceOf(MetalAbortedError);
    expect(server.requests).toHaveLength(0);
  });
});

describe('logs', () => {
  test('one debug line per attempt and a warning per retry, with fixed messages and fields', async () => {
    const lines: { level: string; message: string; fields: unknown }[] = [];
    const log = (level: string) => (message: string, fields?: Record<string, unknown>) => lines.push({ level, message, fields });
    server.answer(json(503, {}), json(200, { id: 'd1' }));
    await client({ logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') } }).devices.get('d1');
    const fields = { operation: 'findDeviceById', method: 'GET', path: '/devices/d1' };
    expect(lines).toEqual([
      { level: 'debug', message: 'metal api request', fields: { ...fields, status: 503, attempt: 1, durationMs: 0 } },
      {
        level: 'warn',
        message: 'metal api request will be retried',
        fields: { ...fields, attempt: 1, reason: 'server-error', delayMs: 75, status: 503 },
      },
      { level: 'debug', message: 'metal api request', fields: { ...fields, status: 200, attempt: 2, durationMs: 0 } },
    ]);
  });
});

describe('rate limit', () => {
  test('requests beyond the burst wait for tokens', async () => {
    server.answer(...Array.from({ length: 4 }, () => json(200, { id: 'd' })));
    const waits: number[] = [];
    const c = client({ rateLimit: { requestsPerSecond: 2, burst: 2 }, observer: { rateLimitWaited: (e) => waits.push(e.waitMs) } });
    for (let i = 0; i < 4; i += 1) await c.devices.get('d');
    // Time moves only while the client sleeps: the third request waits half a second for a token,
    // and so does the fourth, because the third used the token that accrued meanwhile.
    expect(waits).toEqual([500, 500]);
    expect(time.sleeps).toEqual([500, 500]);
  });
});

/** Polls a condition the test cannot await directly (the server saw the request). */
async function waitUntil(probe: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
