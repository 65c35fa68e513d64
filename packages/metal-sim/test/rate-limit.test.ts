// The optional rate limit (rateLimit / --rate-limit): a token bucket per API token. Beyond the
// burst, API calls answer 429 with Retry-After and Metal's `{"errors": [...]}` body, which the
// contract checker holds to the spec's Error schema; the bucket refills with the simulator's clock
// (a ManualClock here, so time moves only when the test says so), and each token has its own.

import { describe, expect, test } from '@jest/globals';
import { DEFAULT_SEED } from '../src/seed.js';
import { describeContract, useSimulator } from './support/harness.js';

const LIMIT = { requestsPerSecond: 2, burst: 3 };
const OTHER_TOKEN = 'second-token';

const sim = useSimulator({
  rateLimit: LIMIT,
  seedConfig: { ...DEFAULT_SEED, tokens: [...DEFAULT_SEED.tokens, { token: OTHER_TOKEN }] },
});

describe('rate limit', () => {
  test('the burst passes, the next call is refused with 429 + Retry-After, and the bucket refills with time', async () => {
    const t = sim();
    const path = `/projects/${t.projectId}/virtual-networks`;
    for (let i = 0; i < LIMIT.burst; i++) expect((await t.api.get(path)).status).toBe(200);

    const refused = await t.api.get(path);
    expect(refused.status).toBe(429);
    // An empty bucket refills one token in 1 / 2 s: Retry-After rounds that up to whole seconds.
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toEqual({ errors: [expect.stringContaining('limited to 2 requests per second (burst 3)')] });
    // A refusal takes no token: asking again at once is refused the same way.
    expect((await t.api.get(path)).status).toBe(429);

    // Half a second refills one token: one call passes, the next is refused again.
    t.clock.advance(500);
    expect((await t.api.get(path)).status).toBe(200);
    expect((await t.api.get(path)).status).toBe(429);

    // Waiting out the Retry-After it named is enough.
    const again = await t.api.get(path);
    t.clock.advance(Number(again.headers.get('retry-after')) * 1000);
    expect((await t.api.get(path)).status).toBe(200);

    // The request log shows each refusal as the rate limit's.
    const logged = t.sim.requests.entries({ status: 429 });
    expect(logged.length).toBe(4);
    expect(logged.every((e) => e.rule === 'rate-limit')).toBe(true);
    expect(t.sim.rateLimiter?.refused).toBe(4);
  });

  test('each API token has its own bucket, and a quiet period refills only up to the burst', async () => {
    const t = sim();
    const path = `/projects/${t.projectId}/virtual-networks`;
    // A long quiet period: the bucket holds the burst, not more.
    t.clock.advance(60_000);
    for (let i = 0; i < LIMIT.burst; i++) expect((await t.api.get(path)).status).toBe(200);
    expect((await t.api.get(path)).status).toBe(429);
    // The other token's bucket is untouched by the first token's calls.
    const other = t.api.withToken(OTHER_TOKEN);
    for (let i = 0; i < LIMIT.burst; i++) expect((await other.get(path)).status).toBe(200);
    expect((await other.get(path)).status).toBe(429);
  });

  test('calls without a token are not counted: they are answered 401, never 429', async () => {
    const t = sim();
    const path = `/projects/${t.projectId}/virtual-networks`;
    t.clock.advance(60_000);
    const anonymous = t.api.withToken(null);
    for (let i = 0; i < LIMIT.burst + 2; i++) expect((await anonymous.get(path)).status).toBe(401);
    // The token's bucket is still full.
    for (let i = 0; i < LIMIT.burst; i++) expect((await t.api.get(path)).status).toBe(200);
  });
});

describe('a rate limit on named tokens', () => {
  const limited = useSimulator({
    rateLimit: { ...LIMIT, tokens: [OTHER_TOKEN] },
    seedConfig: { ...DEFAULT_SEED, tokens: [...DEFAULT_SEED.tokens, { token: OTHER_TOKEN }] },
  });

  test('limits only the tokens it names: the named one is refused past its burst, the other never', async () => {
    const t = limited();
    const path = `/projects/${t.projectId}/virtual-networks`;
    const other = t.api.withToken(OTHER_TOKEN);
    for (let i = 0; i < LIMIT.burst; i++) expect((await other.get(path)).status).toBe(200);
    expect((await other.get(path)).status).toBe(429);
    for (let i = 0; i < 4 * LIMIT.burst; i++) expect((await t.api.get(path)).status).toBe(200);
    expect(t.sim.rateLimiter?.refused).toBe(1);
  });
});

describeContract(sim);
