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

// The shared Metal error policy (metal-api retry.ts, its error policy) seen from outside: what the controller
// does after Metal turned a call away, judged by the simulator's request log.

// The backoff's first delay (NetworkTimings.metalRetryMs; the world's default is 300 ms): long
// enough that the spacing of a machine's retries is the policy's, not the poll's or the queue's.
const RETRY_BASE_MS = 2_000;

const world = useNetworkWorld('net-metal-errors', { timings: { metalRetryMs: RETRY_BASE_MS } });

const BATCH = 'createPortVlanAssignmentBatch';
const POLL = 'findPortVlanAssignmentBatchByPortIdAndBatchId';

/**
 * Metal's Retry-After in the 429 test: longer than the client waits out inside one call (metal-api's
 * maxRetryAfterMs, 5 s), so the call ends and the controller must requeue after it; longer than the
 * backoff (RETRY_BASE_MS) and the world's wake interval, so a retry before it would be the policy
 * ignoring the header. Metal sends minutes at times: the behaviour is the same, only slower to see.
 */
const RETRY_AFTER_S = 12;

beforeAll(async () => {
  await createVlans(world, [1000]);
  await createPool(world, 'vlan-1000', 10);
  await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }]);
}, 60_000);

describe('Metal errors', () => {
  test(`a 429 with Retry-After: ${RETRY_AFTER_S} is reported at once and the machine is not retried before the ${RETRY_AFTER_S} s are up`, async () => {
    const rule = world.sim.faults.add({ fault: 'rate-limit', operationId: BATCH, retryAfterSeconds: RETRY_AFTER_S, times: 1 });
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

    // Not before the Retry-After: no second batch call, no device read for the machine either,
    // watched until 2 s before it is up (counted from when Metal received the refused call).
    const mark = world.sim.requests.lastSeq();
    const deviceId = first[0]?.deviceId;
    const refusedAt = Date.parse(first[0]?.at ?? '');
    await staysTrue(
      `no Metal call for the machine within ${RETRY_AFTER_S - 2} s of the 429`,
      () =>
        world.sim.requests.count({ afterSeq: mark, userAgent: CONTROLLER_AGENT, ...(deviceId === undefined ? {} : { deviceId }) }) === 0,
      refusedAt + (RETRY_AFTER_S - 2) * 1000 - Date.now(),
    );

    // And then it is: the retry reached Metal once the Retry-After was up, and the machine converges.
    await waitMachineNetworkReady(world, 'rl-0', 90_000);
    const batches = world.sim.requests.entries({ operationId: BATCH, userAgent: CONTROLLER_AGENT });
    expect(batches.map((e) => e.status >= 200 && e.status < 300)).toEqual([false, true]);
    expect(Date.parse(batches[1]?.at ?? '') - refusedAt).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000);
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

    const calls = world.sim.requests.entries({ userAgent: CONTROLLER_AGENT, deviceId });
    const batches = calls.filter((e) => e.operationId === BATCH);
    // FAILING batches that failed, then the one that completed: no batch in between.
    expect(batches.map((e) => e.status)).toEqual([201, 201, 201, 201]);
    // Each wait runs from the moment the controller saw a batch fail (its last poll of that batch:
    // no Metal call is made for the machine while it waits) to the next batch. It is never shorter
    // than the backoff, and the next backoff would not have ended yet: 2 s, 4 s, 8 s, doubling.
    // Measured from the sighting, not from the batch before, the wait leaves out how long Metal
    // took to fail the batch, which on a loaded machine is what varies.
    const waits = batches.slice(1).map((next) => {
      const sighting = calls.filter((e) => e.seq < next.seq && e.operationId === POLL).at(-1);
      return Date.parse(next.at) - Date.parse(sighting?.at ?? next.at);
    });
    const backoffs = [RETRY_BASE_MS, 2 * RETRY_BASE_MS, 4 * RETRY_BASE_MS];
    process.stderr.write(`batch retries: ${waits.join(' ms, ')} ms after the failed batch was seen (backoffs ${backoffs.join(', ')})\n`);
    waits.forEach((wait, i) => {
      const backoff = backoffs[i] ?? 0;
      expect({ retry: i + 1, wait, atLeastTheBackoff: wait >= backoff, beforeTheNext: wait < 2 * backoff }).toEqual({
        retry: i + 1,
        wait,
        atLeastTheBackoff: true,
        beforeTheNext: true,
      });
    });
    expect(waits[1]).toBeGreaterThan(waits[0] ?? 0);
    expect(waits[2]).toBeGreaterThan(waits[1] ?? 0);
  }, 180_000);
});
