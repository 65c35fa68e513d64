import { Writable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { EventRecorder, KubeClient, createLogger, type Logger } from '@metal-l2/kube';
import { createMetalClient, type MetalClient } from '@metal-l2/metal-api';
import { startSimulator, type FaultRuleInput, type Simulator } from '@metal-l2/metal-sim';
import { loadContract } from '@metal-l2/test-support/contract';
import { kinds, type Objects, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { startIpamController, type IpamControllerOptions, type RunningIpamController } from '../../src/start.js';
import { patchPoolStatus } from './allocations.js';

// The Metal side of VRF-backed pool tests: a simulator per file (with the OpenAPI contract checked
// on every call), a controller per namespace pointed at it, the credentials Secret, and a logger
// whose lines the test can search for the token.

export const PROJECT_ID = '6b1f3c2e-4d5a-4e6f-8a9b-0c1d2e3f4a5b';
/** Distinctive enough that finding it anywhere in logs, events or conditions is a real leak. */
export const TOKEN = 'tok-6f1c9e2a7b3d4c5e-do-not-leak';
export const METRO = 'da';

export async function startMetal(options: { seed: string; faults?: FaultRuleInput[] }): Promise<Simulator> {
  return startSimulator({
    seed: options.seed,
    seedConfig: {
      metros: [{ code: 'da' }, { code: 'sv' }],
      plans: [{ slug: 'c3.small.x86', ports: 2 }],
      projects: [{ name: 'capi', id: PROJECT_ID }],
      tokens: [{ token: TOKEN }],
    },
    ...(options.faults === undefined ? {} : { faults: options.faults }),
    ...(await loadContract()),
  });
}

/** A client of the simulator for the test's own moves (adopted objects, drift by hand). */
export function metalOf(sim: Simulator): MetalClient {
  return createMetalClient({ token: TOKEN, baseUrl: sim.baseUrl, rateLimit: false });
}

/** Every log line, as JSON text, for searching. */
export function capturedLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback): void {
      lines.push(String(chunk));
      callback();
    },
  });
  return { logger: createLogger({ level: 'debug', stream }), lines };
}

export interface VrfControllerOptions {
  readonly sim: Simulator;
  readonly logger: Logger;
  readonly resyncMs?: number;
  /** Per-attempt Metal timeout (short ones make creates lose their answers). */
  readonly timeoutMs?: number;
  /** How long a create that may have reached Metal holds back the next one (default 1 s). */
  readonly settleMs?: number;
  readonly webhook?: IpamControllerOptions['webhook'];
  readonly cacheClient?: IpamControllerOptions['cacheClient'];
}

/**
 * The controller for one namespace, talking to the simulator with fast retries (the simulator's
 * Retry-After of 0 s and a 10 ms backoff keep storms short), writing real Events.
 */
export async function runVrfController(
  kc: k8s.KubeConfig,
  namespace: string,
  options: VrfControllerOptions,
): Promise<RunningIpamController> {
  const client = KubeClient.fromKubeConfig(kc, { fieldManager: 'metal-l2-test-events' });
  const events = new EventRecorder({ client, component: 'metal-l2-ipam-controller', logger: options.logger });
  return startIpamController({
    kubeConfig: kc,
    namespace,
    logger: options.logger,
    leaderElection: false,
    concurrency: 4,
    events,
    ...(options.webhook === undefined ? {} : { webhook: options.webhook }),
    ...(options.cacheClient === undefined ? {} : { cacheClient: options.cacheClient }),
    vrf: {
      metal: {
        baseUrl: options.sim.baseUrl,
        rateLimit: false,
        retry: { baseDelayMs: 10, maxDelayMs: 50 },
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      },
      controllerNamespace: namespace,
      resyncMs: options.resyncMs ?? 5 * 60_000,
      retry: { baseMs: 200, maxMs: 2_000 },
      settleMs: options.settleMs ?? 1_000,
    },
  });
}

export async function createCredentials(
  kc: k8s.KubeConfig,
  namespace: string,
  options: { name?: string; token?: string } = {},
): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespacedSecret({
    namespace,
    body: { metadata: { name: options.name ?? 'metal' }, stringData: { apiToken: `${options.token ?? TOKEN}\n` } },
  });
}

export interface VrfPoolOptions {
  readonly addresses?: string[];
  readonly prefix?: number;
  readonly vrfID?: string;
  readonly create?: { name: string; ipRanges: string[]; localASN?: number };
  readonly vxlan?: number;
  readonly metalGateway?: boolean;
  readonly secret?: string;
}

export function vrfPoolObject(name: string, namespace: string, options: VrfPoolOptions): Obj {
  return {
    metadata: { name, namespace },
    spec: {
      addresses: options.addresses ?? ['10.60.1.0/24'],
      prefix: options.prefix ?? 24,
      vrf: {
        projectID: PROJECT_ID,
        metro: METRO,
        credentialsSecretRef: { name: options.secret ?? 'metal' },
        ...(options.vrfID === undefined ? {} : { vrfID: options.vrfID }),
        ...(options.create === undefined ? {} : { create: options.create }),
        ...(options.vxlan === undefined ? {} : { vxlan: options.vxlan }),
        ...(options.metalGateway === undefined ? {} : { metalGateway: options.metalGateway }),
      },
    },
  };
}

/** What most VRF tests need: a pool that creates its own VRF (named `<pool>-<namespace>`). */
export interface OwnVrfPoolOptions {
  /** The VRF covers 10.<octet>.0.0/16 and the pool serves 10.<octet>.1.0/24. */
  readonly octet: number;
  /** With a VXLAN the pool also gets its Metal gateway. */
  readonly vxlan?: number;
  readonly secret?: string;
  readonly localASN?: number;
}

export function ownVrfPoolObject(name: string, namespace: string, options: OwnVrfPoolOptions): Obj {
  const { octet, vxlan, secret, localASN } = options;
  return vrfPoolObject(name, namespace, {
    addresses: [`10.${octet}.1.0/24`],
    create: { name: `${name}-${namespace}`, ipRanges: [`10.${octet}.0.0/16`], ...(localASN === undefined ? {} : { localASN }) },
    ...(vxlan === undefined ? {} : { vxlan, metalGateway: true }),
    ...(secret === undefined ? {} : { secret }),
  });
}

/** Creates the pool and waits until it is Ready. */
export async function createReadyPool(objects: Objects, pool: Obj, options: { timeoutMs?: number } = {}): Promise<Obj> {
  await objects.create(kinds.pool, pool);
  const at = { name: pool.metadata.name ?? '', namespace: pool.metadata.namespace ?? '' };
  return poolCondition(objects, at, { type: 'Ready', status: 'True', ...options });
}

export function conditionOf(obj: Obj | undefined, type: string): { status?: string; reason?: string; message?: string } | undefined {
  return (obj?.status?.conditions as { type: string; status?: string; reason?: string; message?: string }[] | undefined)?.find(
    (c) => c.type === type,
  );
}

/** Waits until the pool's condition of `type` has this status (and reason, when given). */
export async function poolCondition(
  objects: Objects,
  pool: { name: string; namespace: string },
  want: { type: string; status: string; reason?: string; timeoutMs?: number },
): Promise<Obj> {
  return waitFor(
    `${pool.namespace}/${pool.name} ${want.type}=${want.status}${want.reason === undefined ? '' : ` (${want.reason})`}`,
    async () => {
      const obj = await objects.get(kinds.pool, pool.name, pool.namespace);
      const c = conditionOf(obj, want.type);
      return c?.status === want.status && (want.reason === undefined || c.reason === want.reason) ? obj : undefined;
    },
    { timeoutMs: want.timeoutMs ?? timeouts.claimBound },
  );
}

/** The pool's Metal objects in the simulator, by kind, as ids. */
export function metalObjects(sim: Simulator): { vrfs: string[]; vlans: string[]; reservations: string[]; gateways: string[] } {
  const { store } = sim;
  return {
    vrfs: [...store.vrfs.keys()],
    vlans: [...store.vlans.keys()],
    reservations: [...store.reservations.keys()],
    gateways: [...store.gateways.keys()],
  };
}

/** Core Events about an object in a namespace, as `reason: message`. */
export async function eventsAbout(kc: k8s.KubeConfig, namespace: string, name: string): Promise<string[]> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const list = await core.listNamespacedEvent({ namespace });
  return list.items.filter((e) => e.involvedObject.name === name).map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`);
}

/** Successful (2xx) creates of an operation: what "created twice" would show. */
export function successfulCalls(sim: Simulator, operationId: string): number {
  return sim.requests.entries({ operationId }).filter((e) => e.status >= 200 && e.status < 300).length;
}

/** Drops a pool's status.vrf, as a backup restore or clusterctl move (which carry no status) would. */
export async function loseVrfStatus(kc: k8s.KubeConfig, pool: { namespace: string; name: string }): Promise<void> {
  await patchPoolStatus(kc, pool, { vrf: null });
}
