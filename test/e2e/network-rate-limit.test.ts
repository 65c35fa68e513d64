import { beforeAll, describe, expect, test } from '@jest/globals';
import { createPrometheusObserver, METAL_API_METRICS } from '@metal-l2/metal-api';
import { Registry } from 'prom-client';
import {
  CONTROLLER_AGENT,
  createMachine,
  createPool,
  createTemplate,
  createVlans,
  poolRef,
  TOKEN,
  useNetworkWorld,
  waitMachineNetworkReady,
} from './support/network-world.js';

// Machines converging while the simulator enforces a rate limit (a token bucket per API token, 429
// with Retry-After beyond it). The network controller runs with its own client-side limit off and
// its own API token, as the chart's Secret gives it; only that token is limited, so it is refused
// for real, and the shared error policy must wait each Retry-After out and still bring every
// machine to Ready. CAPP's token is not limited: CAPP v0.9.0 has no 429 handling, and a refused
// createDevice is its terminal CreateMachineError (controllers/packetmachine_controller.go), which
// no controller of ours can undo.

// Tight enough that 5 machines (a read, a VLAN batch and a poll each by the controller, their
// devices going active together) are refused many times over.
const LIMIT = { requestsPerSecond: 1, burst: 2, tokens: [TOKEN] };
const MACHINES = Array.from({ length: 5 }, (_, i) => `rl-${i}`);

const registry = new Registry();
const world = useNetworkWorld('net-rate-limit', { rateLimit: LIMIT, metalObserver: createPrometheusObserver(registry) });

beforeAll(async () => {
  await createVlans(world, [1000]);
  await createPool(world, 'vlan-1000', 10);
  await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }]);
}, 60_000);

/** The controller's metal_api_requests_total with status 429, all operations together. */
async function controllerSaw429s(): Promise<number> {
  const metric = await registry.getSingleMetric(METAL_API_METRICS.requests)?.get();
  return (metric?.values ?? []).filter((v) => v.labels['status'] === '429').reduce((sum, v) => sum + v.value, 0);
}

describe('a simulated Metal rate limit', () => {
  test('5 machines all become Ready; the controller was refused, counted each 429 and never asked again before its Retry-After', async () => {
    const mark = world.sim.requests.lastSeq();
    await Promise.all(MACHINES.map((name) => createMachine(world, name, 'hb')));
    for (const name of MACHINES) await waitMachineNetworkReady(world, name, 120_000);

    const calls = world.sim.requests.entries({ afterSeq: mark, userAgent: CONTROLLER_AGENT });
    const refused = calls.filter((e) => e.status === 429);
    // The limit did bite the controller (otherwise this test proves nothing), and only the limit.
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((e) => e.rule === 'rate-limit')).toBe(true);
    // Only the controller's token is limited: nobody else (CAPP creating the devices) was refused.
    const allRefused = world.sim.requests.entries({ afterSeq: mark, status: 429 });
    expect(allRefused.length).toBe(refused.length);
    // Its metric counts exactly the refusals the simulator answered it: what the bench reads.
    expect(await controllerSaw429s()).toBe(refused.length);

    // After each 429 (Retry-After: 1 s at this limit), the same request came back no sooner. Only
    // a machine's own calls (its device, its ports) are compared: one machine's reconcile makes them.
    const early: string[] = [];
    for (const r of refused.filter((e) => e.deviceId !== undefined || e.portId !== undefined)) {
      const next = calls.find((e) => e.seq > r.seq && e.method === r.method && e.path === r.path);
      // 10 ms for timer and clock granularity (a Node timer may fire a millisecond early).
      if (next !== undefined && Date.parse(next.at) - Date.parse(r.at) < 990) {
        early.push(`${r.method} ${r.path} again after ${Date.parse(next.at) - Date.parse(r.at)} ms`);
      }
    }
    expect(early).toEqual([]);
  }, 180_000);
});
