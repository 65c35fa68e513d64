import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { Registry } from 'prom-client';
import { createMetalClient } from './client.js';
import type { MetalClient } from './client.js';
import type { LogFields } from './observer.js';
import { drop, fakeTime, hang, json, raw, startTestServer } from './testing/http-server.js';
import type { Answer, TestServer } from './testing/http-server.js';

// The token is distinctive so that any leak, in any form, is found by a plain substring search.
const TOKEN = 'SECRET-metal-token-5d1e0b77c2';

let server: TestServer;
let seen: unknown[];
let registry: Registry;
let client: MetalClient;

beforeEach(async () => {
  server = await startTestServer();
  seen = [];
  registry = new Registry();
  const record = (level: string) => (message: string, fields?: LogFields) => seen.push({ level, message, fields });
  client = createMetalClient({
    token: TOKEN,
    baseUrl: server.baseUrl,
    time: fakeTime(),
    timeoutMs: 150,
    rateLimit: { requestsPerSecond: 1, burst: 1 },
    retry: { maxAttempts: 2 },
    logger: { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') },
    observer: {
      attemptFinished: (e) => seen.push(e),
      retryScheduled: (e) => seen.push(e),
      callFinished: (e) => seen.push(e),
      rateLimitWaited: (e) => seen.push(e),
    },
    registry,
  });
});
afterEach(() => server.close());

/** Every way the outcome of a call can be turned into text. */
function renderings(outcome: unknown): string[] {
  const texts = [String(outcome), inspect(outcome, { depth: Infinity, showHidden: true }), JSON.stringify(outcome) ?? ''];
  if (outcome instanceof Error) texts.push(outcome.message, outcome.stack ?? '');
  return texts;
}

const echoToken = `token ${TOKEN} is not valid for this project`;

const scenarios: { name: string; answers: Answer[] }[] = [
  { name: 'a successful call', answers: [json(200, { id: 'd1' })] },
  { name: 'a 422 whose errors[] echo the token', answers: [json(422, { errors: [echoToken] })] },
  { name: 'a 401 whose error echoes the token', answers: [json(401, { error: echoToken })] },
  { name: 'a proxy page that echoes the token', answers: [raw(403, `<p>${echoToken}</p>`)] },
  { name: 'retried 503s', answers: [json(503, { error: echoToken }), json(503, { error: echoToken })] },
  { name: 'a 2xx that is not JSON and echoes the token', answers: [raw(200, echoToken)] },
  { name: 'dropped connections', answers: [drop, drop] },
  { name: 'timeouts', answers: [hang, hang] },
];

describe('the API token never appears outside the X-Auth-Token header', () => {
  test.each(scenarios)('$name', async ({ answers }) => {
    server.answer(...answers);
    let outcome: unknown;
    try {
      outcome = await client.devices.get('d1');
    } catch (err: unknown) {
      outcome = err;
    }
    expect(server.requests[0]?.headers['x-auth-token']).toBe(TOKEN);
    const texts = [
      ...renderings(outcome),
      inspect(seen, { depth: Infinity, showHidden: true }),
      inspect(client, { depth: Infinity, showHidden: true }),
      JSON.stringify(client),
      await registry.metrics(),
    ];
    for (const text of texts) expect(text).not.toContain(TOKEN);
  });

  test('a long proxy page is scrubbed before it is cut short: no piece of the token survives the cut', async () => {
    // The excerpt keeps 200 characters; the token starts 190 characters in, so cutting first
    // would keep its first 10 characters.
    server.answer(raw(403, `${'x'.repeat(190)}${TOKEN} and more`));
    const err = await client.devices.get('d1').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 403 });
    for (const text of renderings(err)) expect(text).not.toContain(TOKEN.slice(0, 8));
  });

  test('server text is kept, with the token replaced', async () => {
    server.answer(json(422, { errors: [echoToken] }));
    await expect(client.devices.get('d1')).rejects.toMatchObject({
      apiErrors: ['token [REDACTED] is not valid for this project'],
    });
  });
});
