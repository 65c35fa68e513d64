import { describe, expect, test } from '@jest/globals';
import { waitFor } from '@metal-l2/test-support/wait-for';
import {
  CONTROLLER_AGENT,
  condition,
  createMachine,
  createPool,
  createTemplate,
  createVlans,
  deviceIdOfMachine,
  machineNetwork,
  netKinds,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
} from './support/network-world.js';

// Rollouts under stress: the controller killed in the middle of one, and a Metal API that answers
// 429 and 5xx and takes 2 s per call. Every machine must end Ready, every VLAN assigned exactly
// once, and every address distinct.

// Slower devices and batches than the other files: the rollout must last long enough to be interrupted.
const world = useNetworkWorld('net-rollout', { concurrency: 4, delays: { deviceProvisioningMs: 1_500, batchInProgressMs: 1_000 } });
const ROLLOUT = 20;

/** Where the machines stand (one list call, so the picture is one moment): Ready reason → count. */
async function readyReasons(names: readonly string[]): Promise<Record<string, number>> {
  const byName = new Map((await world.objects.list(netKinds.machineNetwork, world.ns)).map((mn) => [mn.metadata.name, mn]));
  const reasons: Record<string, number> = {};
  for (const name of names) {
    const ready = condition(byName.get(name), 'Ready');
    const reason = ready?.status === 'True' ? 'Ready' : (ready?.reason ?? 'NoMachineNetwork');
    reasons[reason] = (reasons[reason] ?? 0) + 1;
  }
  return reasons;
}

async function readyCount(names: readonly string[]): Promise<number> {
  return (await readyReasons(names))['Ready'] ?? 0;
}

/**
 * Each machine's VLANs were assigned by exactly one batch, and no call tried to assign a VLAN that
 * was already there (a batch refused while another was open is adopted, not repeated).
 */
function assertEachVlanAssignedOnce(deviceIds: readonly string[]): void {
  for (const deviceId of deviceIds) {
    const batches = world.sim.requests.entries({
      deviceId,
      operationId: 'createPortVlanAssignmentBatch',
      userAgent: CONTROLLER_AGENT,
      excludeFaults: true,
    });
    expect(batches.filter((b) => b.status === 201 || b.status === 200)).toHaveLength(1);
    expect(batches.filter((b) => b.rule !== undefined && b.rule !== 'one-batch-per-port')).toEqual([]);
  }
}

async function assertDistinctAddresses(names: readonly string[]): Promise<void> {
  const addresses: string[] = [];
  for (const name of names) {
    const recorded = ((await machineNetwork(world, name))?.status?.addresses ?? []) as { address: string }[];
    addresses.push(...recorded.map((a) => a.address));
  }
  expect(addresses).toHaveLength(names.length);
  expect(new Set(addresses).size).toBe(addresses.length);
}

describe('rollouts', () => {
  test(`a controller restart in the middle of a rollout of ${ROLLOUT} machines`, async () => {
    await createVlans(world, [1000]);
    await createPool(world, 'vlan-1000', 10);
    await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }]);
    const names = Array.from({ length: ROLLOUT }, (_, i) => `r-${i}`);
    await Promise.all(names.map((name) => createMachine(world, name, 'hb')));

    // Kill it once some machines are Ready and others are not: mid-rollout, shown, not assumed.
    const before = await waitFor(
      'a rollout in progress (some machines Ready, some not)',
      async () => {
        const ready = await readyCount(names);
        if (ready >= 1 && ready <= ROLLOUT - 5) return ready;
        throw new Error(JSON.stringify(await readyReasons(names)));
      },
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    await world.stopNetworkController();
    expect(await readyCount(names)).toBeLessThan(ROLLOUT);
    expect(before).toBeLessThan(ROLLOUT);
    await world.restartNetworkController();

    for (const name of names) await waitMachineNetworkReady(world, name, 180_000);
    const deviceIds = await Promise.all(names.map((name) => deviceIdOfMachine(world, name)));
    assertEachVlanAssignedOnce(deviceIds);
    await assertDistinctAddresses(names);
  }, 400_000);

  test('Metal 429 and 5xx storms and 2 s latency during a rollout', async () => {
    const names = Array.from({ length: 6 }, (_, i) => `s-${i}`);
    // The storm hits the calls the network controller makes (CAPP treats a failed createDevice as
    // terminal, as the real one does, which is not what is under test here).
    const operations = [
      'findDeviceById',
      'findVirtualNetworks',
      'createPortVlanAssignmentBatch',
      'findPortVlanAssignmentBatchByPortIdAndBatchId',
    ];
    // Whatever the dice do, each kind hits the controller at least once: its first VLAN batch is
    // refused (429) and held up (2 s), its first poll of a batch answered 503. Added first, these
    // answer their calls; the storm's rules do not roll for them.
    const eachKind = [
      world.sim.faults.add({ fault: 'rate-limit', operationId: 'createPortVlanAssignmentBatch', retryAfterSeconds: 1, times: 1 }),
      world.sim.faults.add({ fault: 'latency', operationId: 'createPortVlanAssignmentBatch', latencyMs: 2_000, times: 1 }),
      world.sim.faults.add({ fault: 'server-error', operationId: 'findPortVlanAssignmentBatchByPortIdAndBatchId', status: 503, times: 1 }),
    ];
    const rules = operations.flatMap((operationId) => [
      world.sim.faults.add({ fault: 'rate-limit', operationId, retryAfterSeconds: 1, probability: 0.3 }),
      world.sim.faults.add({ fault: 'server-error', operationId, status: 503, probability: 0.2 }),
      world.sim.faults.add({ fault: 'latency', operationId, latencyMs: 2_000, probability: 0.5 }),
    ]);
    const mark = world.sim.requests.lastSeq();
    await Promise.all(names.map((name) => createMachine(world, name, 'hb')));
    for (const name of names) await waitMachineNetworkReady(world, name, 300_000);
    for (const rule of rules) world.sim.faults.remove(rule.id);

    // The storm hit the controller's own calls with every kind (only the controller makes these
    // two calls), and every machine converged all the same.
    expect(eachKind.map((r) => [r.fault, r.fired])).toEqual([
      ['rate-limit', 1],
      ['latency', 1],
      ['server-error', 1],
    ]);
    const faulted = world.sim.requests.entries({ afterSeq: mark, userAgent: CONTROLLER_AGENT }).filter((e) => e.faultRuleId !== undefined);
    expect(new Set(faulted.map((e) => e.status))).toEqual(new Set([429, 503]));
    const deviceIds = await Promise.all(names.map((name) => deviceIdOfMachine(world, name)));
    assertEachVlanAssignedOnce(deviceIds);
    await assertDistinctAddresses(names);
  }, 400_000);
});
