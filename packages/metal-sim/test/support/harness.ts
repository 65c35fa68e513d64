import { existsSync } from 'node:fs';
// One simulator per test file: a ManualClock (time moves only when a test says so), a seeded id
// stream, and the contract validator watching every call. A missing spec fails the contract
// checks (in CI and everywhere else) unless METAL_L2_NO_CONTRACT=1 says to run without them.

import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ManualClock } from '../../src/clock.js';
import { ContractValidator, defaultSpecPath, specAvailable } from '../../src/contract.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/server.js';
import { DEFAULT_DELAYS } from '../../src/store.js';
import type { DeviceWire, PortWire, VirtualNetworkWire } from '../../src/wire.js';

export const SPEC_PATH = defaultSpecPath();
export const HAS_SPEC = specAvailable(SPEC_PATH);
export const TOKEN = 'sim-token';

/** Time from create to active with the default delays. */
export const PROVISION_MS = DEFAULT_DELAYS.deviceQueuedMs + DEFAULT_DELAYS.deviceProvisioningMs;
/** Time from DELETE to gone (404) with the default delays. */
export const DEPROVISION_MS = DEFAULT_DELAYS.deviceDeprovisioningMs;
export const BATCH_MS = DEFAULT_DELAYS.batchQueuedMs + DEFAULT_DELAYS.batchInProgressMs;

export interface ApiAnswer<T = any> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

/** Plain fetch against the simulator, JSON in and out, the token set unless told otherwise. */
export class Api {
  constructor(
    readonly baseUrl: string,
    /** null sends no X-Auth-Token at all. */
    private readonly token: string | null = TOKEN,
  ) {}

  withToken(token: string | null): Api {
    return new Api(this.baseUrl, token);
  }

  async call<T = any>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token !== null) headers['x-auth-token'] = this.token;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  get<T = any>(path: string): Promise<ApiAnswer<T>> {
    return this.call<T>('GET', path);
  }

  post<T = any>(path: string, body?: unknown): Promise<ApiAnswer<T>> {
    return this.call<T>('POST', path, body);
  }

  put<T = any>(path: string, body?: unknown): Promise<ApiAnswer<T>> {
    return this.call<T>('PUT', path, body);
  }

  delete<T = any>(path: string): Promise<ApiAnswer<T>> {
    return this.call<T>('DELETE', path);
  }
}

export interface TestSim {
  readonly sim: Simulator;
  readonly clock: ManualClock;
  readonly api: Api;
  /** The seed's first project. */
  readonly projectId: string;
}

/**
 * The file's contract validator (when the spec is present): loaded before the file's tests, shared
 * by every simulator the file starts, stopped after them.
 */
export function useContract(): () => ContractValidator | undefined {
  let validator: ContractValidator | undefined;
  beforeAll(async () => {
    if (HAS_SPEC) validator = await ContractValidator.load(SPEC_PATH);
  });
  afterAll(async () => {
    await validator?.close();
  });
  return () => validator;
}

/**
 * Starts a simulator for this file and registers its teardown. Call at module level. `contract:
 * false` runs it without the validator, for requests the spec itself refuses (a test of the refusal).
 */
export function useSimulator(
  options: Partial<SimulatorOptions> = {},
  checks: { readonly contract: boolean } = { contract: true },
): () => TestSim {
  const contract = checks.contract ? useContract() : () => undefined;
  let current: TestSim | undefined;
  beforeAll(async () => {
    const clock = new ManualClock();
    const validator = contract();
    const sim = await startSimulator({
      seed: 'metal-sim-tests',
      clock,
      ...(validator === undefined ? {} : { contract: validator }),
      ...options,
    });
    const projectId = [...sim.store.projects.values()][0]?.id;
    if (projectId === undefined) throw new Error('the seed has no project');
    current = { sim, clock, api: new Api(sim.baseUrl), projectId };
  });
  afterAll(async () => {
    await current?.sim.close();
  });
  return () => {
    if (current === undefined) throw new Error('the simulator is not started yet (use it inside a test)');
    return current;
  };
}

/**
 * Runs the contract checks without the spec only when asked to, by name: `METAL_L2_NO_CONTRACT=1`.
 * Without it a missing spec fails every file's contract block, so CI (which has ../shared) can never
 * go green with the checks quietly off because the spec went missing or moved.
 */
export const CONTRACT_OPT_OUT = 'METAL_L2_NO_CONTRACT';

/**
 * The contract check for a file: every request and response of the file's tests met the spec.
 * Register it last in the file. Without the spec (a clone without ../shared) the block fails and
 * says where the spec should be, unless METAL_L2_NO_CONTRACT=1 opts out: then it checks only that
 * nothing was validated, and says why.
 */
export function describeContract(get: () => TestSim): void {
  describeContractOf(() => get().sim.contract);
}

export function describeContractOf(get: () => ContractValidator | undefined): void {
  if (!HAS_SPEC && process.env[CONTRACT_OPT_OUT] !== '1') {
    describe('contract', () => {
      test('the OpenAPI spec is there to check every request and response against', () => {
        throw new Error(
          `the OpenAPI spec is missing at ${SPEC_PATH}: clone ../shared beside the repository (or point METAL_L2_SHARED at it); ` +
            `${CONTRACT_OPT_OUT}=1 runs these tests without the contract checks`,
        );
      });
    });
    return;
  }
  if (!HAS_SPEC) {
    process.stderr.write(`metal-sim: contract checks skipped (${CONTRACT_OPT_OUT}=1): the OpenAPI spec is missing at ${SPEC_PATH}\n`);
    // Not a skip: this says why nothing was validated, and fails if the spec is there after all
    // or a validator ran anyway (then the real check above must run instead).
    describe(`contract (not checked: ${CONTRACT_OPT_OUT}=1 and the OpenAPI spec is missing at ${SPEC_PATH})`, () => {
      test('no contract validator ran, because there is no spec to check against', () => {
        expect(existsSync(SPEC_PATH)).toBe(false);
        expect(get()).toBeUndefined();
      });
    });
    return;
  }
  describe('contract', () => {
    test('every request and response met the spec', () => {
      const report = get()?.report();
      expect(report).toBeDefined();
      if (report === undefined) return;
      process.stderr.write(
        `metal-sim contract (${expect.getState().testPath?.split('/').pop() ?? '?'}): ${report.requestsValidated} requests and ${report.responsesValidated} responses validated, ${report.responsesSkipped} fault responses skipped, ${report.waived.length} waived\n`,
      );
      expect(report.violations).toEqual([]);
      expect(report.requestsValidated).toBeGreaterThan(0);
      expect(report.responsesValidated).toBeGreaterThan(0);
    });
  });
}

/** Creates a device and moves the clock until it is active. */
export async function createActiveDevice(t: TestSim, body: Record<string, unknown> = {}): Promise<DeviceWire> {
  const created = await t.api.post<DeviceWire>(`/projects/${t.projectId}/devices`, {
    metro: 'da',
    plan: 'c3.small.x86',
    operating_system: 'ubuntu_22_04',
    ...body,
  });
  if (created.status !== 201) throw new Error(`create device: ${created.status} ${JSON.stringify(created.body)}`);
  t.clock.advance(PROVISION_MS);
  const device = await t.api.get<DeviceWire>(`/devices/${created.body.id}`);
  if (device.body.state !== 'active') throw new Error(`device did not become active: ${device.body.state}`);
  return device.body;
}

export function portByName(device: DeviceWire, name: string): PortWire {
  const port = device.network_ports.find((p) => p.name === name);
  if (port === undefined) throw new Error(`device has no port ${name}`);
  return port;
}

export async function createVlan(t: TestSim, body: Record<string, unknown>): Promise<VirtualNetworkWire> {
  const res = await t.api.post<VirtualNetworkWire>(`/projects/${t.projectId}/virtual-networks`, { metro: 'da', ...body });
  if (res.status !== 201) throw new Error(`create vlan: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Polls until `probe` returns a value (not undefined) or the deadline passes; reports the last value seen. */
export async function waitFor<T>(
  description: string,
  probe: () => Promise<T | undefined>,
  opts: { timeoutMs: number; intervalMs: number },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let last: unknown;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    last = value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${description} (last: ${JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, opts.intervalMs));
  }
}

/** A 422 in the API's format, refused by the named rule (the request log records which rule refused). */
export function expectRefusedBy(t: TestSim, res: ApiAnswer, rule: string): void {
  expect({ status: res.status, rule: t.sim.requests.entries().at(-1)?.rule }).toEqual({ status: 422, rule });
  const body = res.body as { errors?: unknown };
  expect(Array.isArray(body.errors)).toBe(true);
  expect((body.errors as unknown[]).every((e) => typeof e === 'string' && e.length > 0)).toBe(true);
}
