// The client's retry behaviour against the simulator's injected faults: bounded attempts,
// Retry-After honoured, no retry on 422, creates never repeated after the API may have acted, and
// a whole mode transition converging through a storm of 429s, 5xx and dropped connections.

import { afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { applyPortPlan } from '../src/ports.js';
import type { MetalClient } from '../src/client.js';
import { isMetalApiError, isMetalHttpError, MetalHttpError, MetalNetworkError, MetalTimeoutError } from '../src/errors.js';
import { planPortChanges } from '../src/port-plan/plan.js';
import { desiredPorts, HYBRID, LAYER2_INDIVIDUAL, LAYER3 } from '../src/testing/ports.js';
import type { DeviceSketch } from '../src/testing/ports.js';
import type { Device } from '../src/types.js';
import {
  BATCH_POLL_MS,
  createActiveDevice,
  describeContract,
  DEVICE_PORT_INCLUDES,
  readDevice,
  useSimulator,
} from './support/simulator.js';

const harness = useSimulator();
let device: Device;

beforeAll(async () => {
  const h = harness();
  for (const vxlan of [1000, 1001]) await h.client.virtualNetworks.create(h.projectId, { metro: 'da', vxlan });
  device = await createActiveDevice(h, 'faults');
});

afterEach(() => {
  harness().sim.faults.clear();
});

function deviceId(): string {
  return device.id ?? '';
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err: unknown) {
    return err;
  }
  throw new Error('expected the call to fail');
}

/** Calls the simulator logged for one operation since `afterSeq`, with their statuses. */
function statuses(operationId: string, afterSeq: number): number[] {
  return harness()
    .sim.requests.entries({ operationId, afterSeq })
    .map((e) => e.status);
}

describe('retries against injected faults', () => {
  test('a 429 with Retry-After is waited out exactly, then the call succeeds', async () => {
    const h = harness();
    h.sim.faults.add({ fault: 'rate-limit', operationId: 'findDeviceById', retryAfterSeconds: 3, times: 2 });
    const seq = h.sim.requests.lastSeq();
    const sleepsBefore = h.clientTime.sleeps.length;
    await expect(h.client.devices.get(deviceId())).resolves.toMatchObject({ id: deviceId() });
    expect(statuses('findDeviceById', seq)).toEqual([429, 429, 200]);
    expect(h.clientTime.sleeps.slice(sleepsBefore)).toEqual([3_000, 3_000]);
  });

  test('a storm of 5xx ends after the bounded number of attempts with the last error', async () => {
    const h = harness();
    h.sim.faults.add({ fault: 'server-error', status: 503, operationId: 'findPortById' });
    const seq = h.sim.requests.lastSeq();
    const client = h.newClient({ retry: { maxAttempts: 3, baseDelayMs: 100 } });
    const err = await failure(client.ports.get(device.network_ports?.[0]?.id ?? ''));
    expect(err).toBeInstanceOf(MetalHttpError);
    expect(err).toMatchObject({ status: 503, attempts: 3, operation: 'findPortById' });
    expect(statuses('findPortById', seq)).toEqual([503, 503, 503]);
  });

  test('a 422 from a rule is never retried', async () => {
    const h = harness();
    const other = await h.client.virtualNetworks.create(h.projectId, { metro: 'sv', vxlan: 1500 });
    const bond0 = device.network_ports?.find((p) => p.name === 'bond0');
    const seq = h.sim.requests.lastSeq();
    const err = await failure(h.client.ports.assign(bond0?.id ?? '', other.id ?? ''));
    expect(err).toMatchObject({ status: 422, attempts: 1, operation: 'assignPort' });
    expect((err as MetalHttpError).apiErrors.length).toBeGreaterThan(0);
    expect(h.sim.requests.entries({ afterSeq: seq }).map((e) => [e.operationId, e.status, e.rule])).toEqual([
      ['assignPort', 422, 'vlan-metro-local'],
    ]);
  });

  test('a dropped connection is retried for a read', async () => {
    const h = harness();
    h.sim.faults.add({ fault: 'drop', operationId: 'findVirtualNetworks', times: 1 });
    const seq = h.sim.requests.lastSeq();
    await expect(h.client.virtualNetworks.list(h.projectId)).resolves.toEqual(expect.any(Array));
    expect(statuses('findVirtualNetworks', seq)).toEqual([0, 200]);
  });

  test('a create is not repeated after a dropped connection or a 500: the caller lists and adopts', async () => {
    const h = harness();
    h.sim.faults.add({ fault: 'drop', operationId: 'createVrf', times: 1 });
    h.sim.faults.add({ fault: 'server-error', status: 500, operationId: 'createVirtualNetwork', times: 1 });
    const seq = h.sim.requests.lastSeq();
    expect(await failure(h.client.vrfs.create(h.projectId, { name: 'pool', metro: 'da', ip_ranges: ['10.40.0.0/16'] }))).toBeInstanceOf(
      MetalNetworkError,
    );
    expect(await failure(h.client.virtualNetworks.create(h.projectId, { metro: 'da', vxlan: 1777 }))).toMatchObject({ status: 500 });
    expect(statuses('createVrf', seq)).toEqual([0]);
    expect(statuses('createVirtualNetwork', seq)).toEqual([500]);
  });

  test('a create is repeated after a 429: the API turned it away unread', async () => {
    const h = harness();
    h.sim.faults.add({ fault: 'rate-limit', operationId: 'createVirtualNetwork', retryAfterSeconds: 1, times: 1 });
    const seq = h.sim.requests.lastSeq();
    await expect(h.client.virtualNetworks.create(h.projectId, { metro: 'da', vxlan: 1888 })).resolves.toMatchObject({ vxlan: 1888 });
    expect(statuses('createVirtualNetwork', seq)).toEqual([429, 201]);
  });

  test('an answer slower than the timeout is a timeout, retried for a read', async () => {
    const h = harness();
    h.sim.faults.add({ fault: 'latency', latencyMs: 400, operationId: 'findVrfs', times: 1 });
    const client = h.newClient({ timeoutMs: 150 });
    await expect(client.vrfs.list(h.projectId)).resolves.toEqual(expect.any(Array));
    const slow = h.newClient({ timeoutMs: 150, retry: { maxAttempts: 1 } });
    h.sim.faults.add({ fault: 'latency', latencyMs: 400, operationId: 'findVrfs', times: 1 });
    expect(await failure(slow.vrfs.list(h.projectId))).toBeInstanceOf(MetalTimeoutError);
  });
});

describe('a mode transition through a fault storm', () => {
  // What a controller does: read, plan, apply; on an error, read and plan again from wherever the
  // device got to. The client retries what is safe to repeat; a VLAN batch that failed to be
  // created is not repeated blindly but planned again from the state the API reports.
  async function reconcile(client: MetalClient, id: string, sketch: DeviceSketch): Promise<void> {
    const h = harness();
    const read = (): Promise<Device> => client.devices.get(id, { include: DEVICE_PORT_INCLUDES });
    for (let round = 1; round <= 20; round += 1) {
      try {
        const vlans = await client.virtualNetworks.list(h.projectId);
        const plan = planPortChanges({ device: await read(), desired: desiredPorts(sketch), virtualNetworks: vlans });
        if (plan.kind === 'refused') throw new Error(plan.issues.map((i) => i.message).join('; '));
        if (plan.calls.length === 0) return;
        const outcome = await applyPortPlan(client.ports, plan.calls, { sleep: h.advanceSim, pollIntervalMs: BATCH_POLL_MS });
        expect(outcome).toEqual({ kind: 'applied', callCount: plan.calls.length });
      } catch (err: unknown) {
        if (!isMetalApiError(err) || isMetalHttpError(err, 422)) throw err;
      }
    }
    throw new Error(`device ${id} did not converge to ${JSON.stringify(sketch)} in 20 rounds`);
  }

  test('layer3 -> layer2-individual -> hybrid -> layer3 converges while a quarter of the port calls fail', async () => {
    const h = harness();
    const id = (await createActiveDevice(h, 'storm')).id ?? '';
    // One port call in four and one device read in ten fail, with the simulator's seeded dice.
    h.sim.faults.add({ fault: 'rate-limit', path: '/ports/**', retryAfterSeconds: 1, probability: 0.15 });
    h.sim.faults.add({ fault: 'server-error', status: 502, path: '/ports/**', probability: 0.1 });
    h.sim.faults.add({ fault: 'drop', operationId: 'findDeviceById', probability: 0.1 });
    const client = h.newClient({ retry: { maxAttempts: 8, baseDelayMs: 50 } });
    const seq = h.sim.requests.lastSeq();

    for (const sketch of [LAYER2_INDIVIDUAL, HYBRID, LAYER3]) await reconcile(client, id, sketch);
    h.sim.faults.clear();

    const entries = h.sim.requests.entries({ afterSeq: seq });
    // The storm really happened, and no write was ever refused: retries and re-plans never asked
    // for a change the port could not take.
    expect(entries.filter((e) => e.faultRuleId !== undefined).length).toBeGreaterThan(5);
    expect(entries.filter((e) => e.status === 422)).toEqual([]);
    const end = await readDevice(h, id);
    expect(end.network_ports?.find((p) => p.name === 'bond0')?.network_type).toBe('layer3');
  });
});

describeContract(harness);
