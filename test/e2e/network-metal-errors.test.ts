import { describe, expect, test } from '@jest/globals';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
import {
  CONTROLLER_AGENT,
  condition,
  createMachine,
  createPool,
  createTemplate,
  createVlans,
  machineNetwork,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
} from './support/network-world.js';

// The shared Metal error policy (metal-api error-policy) seen from outside: what the controller
// does after Metal turned a call away, judged by the simulator's request log.

const world = useNetworkWorld('net-metal-errors');

const BATCH = 'createPortVlanAssignmentBatch';

describe('Metal errors', () => {
  test('a 429 with Retry-After: 60 is reported at once and the machine is not retried before the 60 s are up', async () => {
    await createVlans(world, [1000]);
    await createPool(world, 'vlan-1000', 10);
    await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }]);
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
});
