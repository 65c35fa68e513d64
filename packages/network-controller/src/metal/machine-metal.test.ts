import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { MetalClients, createMetalClient, isMetalHttpError, type MetalClient } from '@metal-l2/metal-api';
import { startSimulator, type Simulator } from '@metal-l2/metal-sim';
import { VlanCache } from './machine-metal.js';

// Against the simulator (Metal's access rules: a token sees only the projects it is granted).

const PROJECT = '5a0c1e2d-3f4b-4c6d-8e9f-0a1b2c3d4e5f';
const GRANTED = 'token-granted-the-project';
const OTHER = 'token-granted-nothing-here';

let sim: Simulator;
const client = (token: string): MetalClient =>
  createMetalClient({ token, baseUrl: sim.baseUrl, rateLimit: false, retry: { maxAttempts: 1 } });

beforeAll(async () => {
  sim = await startSimulator({
    seedConfig: {
      metros: [{ code: 'da' }],
      plans: [{ slug: 'c3.small.x86', ports: 2 }],
      projects: [{ name: 'capi', id: PROJECT }, { name: 'elsewhere' }],
      tokens: [
        { token: GRANTED, projects: [PROJECT] },
        { token: OTHER, projects: ['elsewhere'] },
      ],
    },
  });
  await client(GRANTED).virtualNetworks.create(PROJECT, { vxlan: 1000, metro: 'da' });
});
afterAll(async () => {
  await sim.close();
});

describe('VlanCache', () => {
  test('one token answer is never served to another token: a token without the project is refused by Metal, not answered from the cache', async () => {
    const cache = new VlanCache({ now: () => 0 });
    const at = { projectId: PROJECT, metro: 'da', wanted: [1000] };
    const granted = await cache.list(client(GRANTED), { ...at, credentials: MetalClients.fingerprint(GRANTED) });
    expect(granted.map((v) => v.vxlan)).toEqual([1000]);

    const refused = await cache.list(client(OTHER), { ...at, credentials: MetalClients.fingerprint(OTHER) }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isMetalHttpError(refused) && [403, 404].includes(refused.status)).toBe(true);
  });

  test('the same token shares one list across machines', async () => {
    const cache = new VlanCache({ now: () => 0 });
    const at = { projectId: PROJECT, metro: 'da', wanted: [1000], credentials: MetalClients.fingerprint(GRANTED) };
    const mark = sim.requests.lastSeq();
    await cache.list(client(GRANTED), at);
    await cache.list(client(GRANTED), at);
    expect(sim.requests.count({ afterSeq: mark, operationId: 'findVirtualNetworks' })).toBe(1);
  });
});
