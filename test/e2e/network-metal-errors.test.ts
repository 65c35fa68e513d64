import { beforeAll, describe, expect, test } from '@jest/globals';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
import {
  CONTROLLER_AGENT,
  condition,
  createMachine,
  createPool,
  createTemplate,
  createVlans,
  deviceIdOfMachine,
  machineNetwork,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
} from './support/network-world.js';

// The shared Metal error policy (metal-api error-policy) seen from outside: what the controller
// does after Metal turned a call away, judged by the simulator's request log.

// The backoff's first delay (NetworkTimings.metalRetryMs; the world's default is 300 ms): long
// enough that the spacing of a machine's retries is the policy's, not the poll's or the queue's.
const RETRY_BASE_MS = 2_000;

const world = useNetworkWorld('net-metal-errors', { timings: { metalRetryMs: RETRY_BASE_MS } });

const BATCH = 'createPortVlanAssignmentBatch';

beforeAll(async () => {
  await createVlans(world, [1000]);
  await createPool(world, 'vlan-1000', 10);
  await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }]);
}, 60_000);

describe('Metal errors', () => {
  test('a 429 with Retry-After: 60 is reported at once and the machine is not retried before the 60 s are up', async () => {
    const rule = world.sim.faults.add({ fault: 'rate-limit', operationId: BATCH, retryAfterSeconds: 60, times: 1 });
    await createMachine(world, 'rl-0', 'hb');

    // The controller handled the 429 (no worker sits in the call for a minute): it says so.
    const reported = await waitFor(
      'PortsConfigured to report the 429',
      async () => {
        const mn = await machineNetwork(world, 'rl-0');
        const ports = condition(mn, 'PortsConfigured');
        return ports?.reason === 'MetalAPIError' && (ports.message ?? '').includes('429') ? ports : false;
      },
      { timeoutMs: 30_000 },
    );
    expect(reported.message).toContain(BATCH);
    const first = world.sim.requests.entries({ operationId: BATCH, userAgent: CONTROLLER_AGENT });
    expect(first.map((e) => [e.status, e.faultRuleId])).toEqual([[429, rule.id]]);
    const firstAt = Date.now();

    // Not before the Retry-After: no second batch call, no device read for the machine either.
    const mark = world.sim.requests.lastSeq();
    const deviceId = first[0]?.deviceId;
    await staysTrue(
      'no Metal call for the machine within 20 s of the 429',
      () =>
        world.sim.requests.count({ afterSeq: mark, userAgent: CONTROLLER_AGENT, ...(deviceId === undefined ? {} : { deviceId }) }) === 0,
      20_000,
    );

    // And then it is: the requeue came after the Retry-After, and the machine converges.
    await waitMachineNetworkReady(world, 'rl-0', 90_000);
    const retriedAfterMs = Date.now() - firstAt;
    const batches = world.sim.requests.entries({ operationId: BATCH, userAgent: CONTROLLER_AGENT });
    expect(batches.map((e) => e.status >= 200 && e.status < 300)).toEqual([false, true]);
    expect(retriedAfterMs).toBeGreaterThanOrEqual(55_000);
  }, 150_000);

  test('VLAN batches that keep failing are retried after 2 s, 4 s, 8 s (doubling from metalRetryMs); once they stop failing the machine converges', async () => {
    const FAILING = 3;
    const rule = world.sim.faults.add({ fault: 'batch-failed', times: FAILING, message: 'port configuration failed (injected)' });
    await createMachine(world, 'bf-0', 'hb');
    const deviceId = await deviceIdOfMachine(world, 'bf-0');

    // While they fail the machine says why, with Metal's own message.
    await waitFor(
      'PortsConfigured to report the failed batch',
      async () => {
        const ports = condition(await machineNetwork(world, 'bf-0'), 'PortsConfigured');
        return ports?.reason === 'MetalAPIError' && (ports.message ?? '').includes('port configuration failed (injected)');
      },
      { timeoutMs: 60_000 },
    );
    await waitMachineNetworkReady(world, 'bf-0', 90_000);
    expect(world.sim.faults.list().find((f) => f.id === rule.id)).toMatchObject({ fired: FAILING, remaining: 0 });

    const batches = world.sim.requests.entries({ operationId: BATCH, userAgent: CONTROLLER_AGENT, deviceId });
    // FAILING batches that failed, then the one that completed: no batch in between.
    expect(batches.map((e) => e.status)).toEqual([201, 201, 201, 201]);
    const at = batches.map((e) => Date.parse(e.at));
    const gaps = at.slice(1).map((t, i) => t - (at[i] ?? t));
    // Each retry waits out its backoff (never sooner) and comes before the next backoff would
    // have ended (the wait is the policy's, not something longer): 2 s, 4 s, 8 s.
    const backoffs = [RETRY_BASE_MS, 2 * RETRY_BASE_MS, 4 * RETRY_BASE_MS];
    gaps.forEach((gap, i) => {
      const backoff = backoffs[i] ?? 0;
      expect([i, gap >= backoff, gap < backoff + RETRY_BASE_MS]).toEqual([i, true, true]);
    });
    expect(gaps[1]).toBeGreaterThan(gaps[0] ?? 0);
    expect(gaps[2]).toBeGreaterThan(gaps[1] ?? 0);
  }, 180_000);
});
