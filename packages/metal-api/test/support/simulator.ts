// The client and the planner against the real neighbour: an in-process metal-sim per test file on
// port 0, with a manual clock (device provisioning and VLAN batches move only when a test moves
// time) and the simulator's contract validator checking every request the client sends and every
// response it gets (a missing spec fails the file unless METAL_L2_NO_CONTRACT=1).

import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { DEFAULT_DELAYS, ManualClock, defaultSpecPath, startSimulator } from '@metal-l2/metal-sim';
import { contractNotChecked, expectNoContractViolations, loadContract } from '@metal-l2/test-support/contract';
import type { Simulator, SimulatorOptions } from '@metal-l2/metal-sim';
import { createMetalClient } from '../../src/client.js';
import type { MetalClient, MetalClientOptions } from '../../src/client.js';
import { fakeTime } from '../../src/testing/http-server.js';
import type { FakeTime } from '../../src/testing/http-server.js';
import type { Device } from '../../src/types.js';

export const SPEC_PATH = defaultSpecPath();
/** The simulator's default seed grants this token every project. */
export const SIM_TOKEN = 'sim-token';
export const PROVISION_MS = DEFAULT_DELAYS.deviceQueuedMs + DEFAULT_DELAYS.deviceProvisioningMs;
export const BATCH_POLL_MS = 250;

/** Ports come with their VLANs and native VLAN expanded, as the planner wants them. */
export const DEVICE_PORT_INCLUDES = ['network_ports.virtual_networks', 'network_ports.native_virtual_network'];

export interface SimHarness {
  sim: Simulator;
  /** The simulator's clock: moves only when a test (or advanceSim) moves it. */
  clock: ManualClock;
  client: MetalClient;
  /** The client's clock: retry and rate-limit waits are recorded here, never slept. */
  clientTime: FakeTime;
  projectId: string;
  /** A `sleep` for batch polling that moves the simulator's clock instead of waiting. */
  advanceSim: (ms: number) => Promise<void>;
  /** Another client on the same simulator, with other options. */
  newClient(options?: Partial<MetalClientOptions>): MetalClient;
}

/** Starts a simulator for the file (before its tests) and stops it after them. Call at module level. */
export function useSimulator(options: Partial<SimulatorOptions> = {}): () => SimHarness {
  let harness: SimHarness | undefined;
  beforeAll(async () => {
    const clock = new ManualClock();
    const sim = await startSimulator({
      seed: 'metal-api-tests',
      clock,
      ...(await loadContract(SPEC_PATH)),
      ...options,
    });
    const projectId = [...sim.store.projects.values()][0]?.id;
    if (projectId === undefined) throw new Error('the simulator seed has no project');
    const clientTime = fakeTime();
    const newClient = (extra: Partial<MetalClientOptions> = {}): MetalClient =>
      createMetalClient({
        token: SIM_TOKEN,
        baseUrl: sim.baseUrl,
        time: clientTime,
        rateLimit: false,
        // The in-process simulator answers in milliseconds on an idle machine and has taken over 5 s
        // on a loaded one (CI's two workers, other jobs): no test here is about this bound, and
        // the timeout tests set their own.
        timeoutMs: 30_000,
        ...extra,
      });
    harness = {
      sim,
      clock,
      client: newClient(),
      clientTime,
      projectId,
      advanceSim: (ms) => {
        clock.advance(ms);
        return Promise.resolve();
      },
      newClient,
    };
  });
  afterAll(async () => {
    await harness?.sim.close();
    await harness?.sim.contract?.close();
  });
  return () => {
    if (harness === undefined) throw new Error('the simulator is not started yet (use it inside a test)');
    return harness;
  };
}

/** Creates a 2-port device through the client and moves the simulator's clock until it is active. */
export async function createActiveDevice(h: SimHarness, hostname: string, plan = 'c3.small.x86'): Promise<Device> {
  const created = await h.client.devices.create(h.projectId, {
    metro: 'da',
    plan,
    operating_system: 'ubuntu_24_04',
    hostname,
    billing_cycle: 'hourly',
    tags: ['metal-api-test'],
  });
  h.clock.advance(PROVISION_MS);
  const device = await readDevice(h, created.id ?? '');
  if (device.state !== 'active') throw new Error(`device ${hostname} is ${device.state ?? 'in no state'}, not active`);
  return device;
}

export function readDevice(h: SimHarness, id: string): Promise<Device> {
  return h.client.devices.get(id, { include: DEVICE_PORT_INCLUDES });
}

/**
 * The file's contract check: every request the client sent and every response it got met the
 * spec. Register it last. A missing spec fails it, unless METAL_L2_NO_CONTRACT=1 opts out: then
 * it says in its name that nothing was checked, and fails if a validator ran after all.
 */
export function describeContract(get: () => SimHarness): void {
  const title = contractNotChecked(SPEC_PATH)
    ? `contract (not checked: METAL_L2_NO_CONTRACT=1 and the OpenAPI spec is missing at ${SPEC_PATH})`
    : 'contract';
  describe(title, () => {
    test('every request the client sent and every response it got met the spec', () => {
      const report = expectNoContractViolations(get().sim.contract);
      if (report === undefined) return;
      const file = expect.getState().testPath?.split('/').pop() ?? '?';
      process.stderr.write(
        `metal-api contract (${file}): ${report.requestsValidated} requests and ${report.responsesValidated} responses validated, ` +
          `${report.responsesSkipped} fault responses skipped, ${report.waived.length} waived\n`,
      );
      expect(report.responsesValidated).toBeGreaterThan(0);
    });
  });
}
