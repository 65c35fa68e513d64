// (e) the network controller: N hybrid-bonded machines (bond0 with VLAN 1000 and one address from
// an InClusterIPPool) through the whole flow on a fresh local control plane, with the Metal
// simulator and the CAPP fixture in this process and both controllers as child processes. Counts
// the Metal calls each party made from the simulator's request log (by User-Agent), then restarts
// the network controller and counts the calls its resync of every machine makes (target 0).
import { createWriteStream, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { clearInterval, setInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { cabpkCloudConfig, reserveClusterEndpoint, startCappFixture } from '@metal-l2/capp-fixture';
import { createLogger, loadKubeConfig } from '@metal-l2/kube';
import { createMetalClient } from '@metal-l2/metal-api';
import { DEFAULT_DELAYS, startSimulator } from '@metal-l2/metal-sim';
import { resourcePath } from './api.js';
import { createPool, percentile, poolFor } from './burst.js';
import { benchLogDir, createNamespace, crdDirs, installCrds, startCluster, waitUntil } from './cluster.js';
import { freePort, startNetworkController, startOurController } from './controllers.js';
import { cpuSeconds, requestCounts, requestDelta } from './server-metrics.js';
import { ours } from './targets.js';
import { mib, ms, num, printTable, sec, section } from './table.js';

const note = (text) => process.stderr.write(`  ${text}\n`);

const PROJECT_ID = '0f6c3e2a-7b1d-4c5e-9a8b-1d2e3f4a5b6c';
const TOKEN = 'metal-tok-bench-network';
/**
 * CAPP's own API token (the bench's setup calls that CAPP's PacketCluster controller would make
 * use it too). --sim-rate-limit limits only the network controller's: CAPP v0.9.0 has no 429
 * handling, and a refused createDevice is its terminal CreateMachineError.
 */
const CAPP_TOKEN = 'metal-tok-bench-capp';
const METRO = 'da';
const CLUSTER = 'wl';
const VXLAN = 1000;
const CREDENTIALS_SECRET = 'metal-credentials';
/** User-Agent prefixes in the simulator's request log. */
const CONTROLLER_AGENT = 'metal-l2-network-controller';
const CAPP_AGENT = 'cluster-api-provider-packet';
/** The fixture's device poll (CAPP polls every 10 s). */
const CAPP_POLL_MS = 1_000;

const kinds = {
  packetMachine: { group: 'infrastructure.cluster.x-k8s.io', version: 'v1beta1', plural: 'packetmachines', kind: 'PacketMachine' },
  packetCluster: { group: 'infrastructure.cluster.x-k8s.io', version: 'v1beta1', plural: 'packetclusters', kind: 'PacketCluster' },
  machine: { group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'machines', kind: 'Machine' },
  cluster: { group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'clusters', kind: 'Cluster' },
  template: { group: 'network.metal.x-k8s.io', version: 'v1alpha1', plural: 'machinenetworktemplates', kind: 'MachineNetworkTemplate' },
  machineNetwork: { group: 'network.metal.x-k8s.io', version: 'v1alpha1', plural: 'machinenetworks', kind: 'MachineNetwork' },
  secret: { group: '', version: 'v1', plural: 'secrets', kind: 'Secret' },
};

const path = (kind, namespace, name) => resourcePath({ ...kind, namespace, name });
const body = (kind, metadata, rest) => ({
  apiVersion: kind.group === '' ? kind.version : `${kind.group}/${kind.version}`,
  kind: kind.kind,
  metadata,
  ...rest,
});

/** RFC 3339 in UTC to the second, as our webhook writes the hold marker. */
const rfc3339 = (date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

const readyOf = (obj) => (obj?.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
/** Ready=False DeviceFailed: CAPP gave the machine up (a terminal failure reason on the PacketMachine); it will never be Ready. */
const deviceFailedOf = (obj) =>
  (obj?.status?.conditions ?? []).find((c) => c.type === 'Ready' && c.status === 'False' && c.reason === 'DeviceFailed');

/** Sums of a Prometheus text exposition's samples named `name`, keyed by the value of `label` ('' without). */
async function scrape(url, name, label) {
  const out = {};
  try {
    const res = await fetch(url);
    if (res.status !== 200) return out;
    for (const line of (await res.text()).split('\n')) {
      if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
      const key = label === undefined ? '' : (new RegExp(`${label}="([^"]*)"`).exec(line)?.[1] ?? '');
      out[key] = (out[key] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  } catch {
    // the process is gone or not listening: no figures
  }
  return out;
}

/** Request log entries counted by operation (the method when the simulator named none). */
function countOps(entries) {
  const ops = {};
  for (const e of entries) ops[e.operationId ?? e.method] = (ops[e.operationId ?? e.method] ?? 0) + 1;
  return ops;
}

const sumOf = (record) => Object.values(record).reduce((a, b) => a + b, 0);
const byOperation = (record) =>
  Object.entries(record)
    .sort((a, b) => b[1] - a[1])
    .map(([op, n]) => `${op} ${num(n)}`)
    .join(', ');

/** Sets up the world: namespace, credentials, cluster objects, VLAN, pool, template. */
async function createWorld({ api, sim, namespace, count, ipam }) {
  await api.post(
    path(kinds.secret, namespace),
    body(kinds.secret, { name: CREDENTIALS_SECRET, namespace }, { stringData: { apiToken: TOKEN } }),
  );
  await api.post(
    path(kinds.packetCluster, namespace),
    body(kinds.packetCluster, { name: CLUSTER, namespace }, { spec: { projectID: PROJECT_ID, metro: METRO } }),
  );
  await api.post(
    path(kinds.cluster, namespace),
    body(
      kinds.cluster,
      { name: CLUSTER, namespace },
      { spec: { infrastructureRef: { apiGroup: kinds.packetCluster.group, kind: 'PacketCluster', name: CLUSTER } } },
    ),
  );
  // No CAPI Cluster controller runs here: say the infrastructure is provisioned, as it would be
  // once CAPP made the PacketCluster ready (CAPP waits for it before creating devices).
  await api.mergePatch(resourcePath({ ...kinds.cluster, namespace, name: CLUSTER, subresource: 'status' }), {
    status: { initialization: { infrastructureProvisioned: true } },
  });
  const metal = createMetalClient({ token: CAPP_TOKEN, baseUrl: sim.baseUrl, rateLimit: false, userAgent: 'metal-l2-bench' });
  // The PacketCluster's vipManager defaults to CPEM, so CAPP's machine reconcile looks up the
  // cluster's endpoint reservation once a device is active (a nil-pointer panic without one):
  // reserve it, as CAPP's PacketCluster controller (not played by the fixture) does first.
  await reserveClusterEndpoint(metal, { projectId: PROJECT_ID, clusterName: CLUSTER, metro: METRO });
  await metal.virtualNetworks.create(PROJECT_ID, { vxlan: VXLAN, metro: METRO, description: `vlan ${VXLAN}` });
  const spec = poolFor(count);
  await createPool({ api, namespace, target: ours, name: `vlan-${VXLAN}`, spec, controller: ipam });
  await api.post(
    path(kinds.template, namespace),
    body(
      kinds.template,
      { name: 'hybrid-bonded', namespace },
      {
        spec: {
          ports: [
            {
              name: 'bond0',
              vlans: [{ vxlan: VXLAN, addressesFromPools: [{ apiGroup: ours.pool.group, kind: ours.pool.kind, name: `vlan-${VXLAN}` }] }],
            },
          ],
        },
      },
    ),
  );
  return spec;
}

/**
 * One machine as Cluster API makes it: the PacketMachine (already carrying what our webhook adds:
 * the CAPI pause and our hold marker), the bootstrap data Secret, the Machine.
 */
async function createMachine(api, namespace, name) {
  const labels = { 'cluster.x-k8s.io/cluster-name': CLUSTER };
  await api.post(
    path(kinds.packetMachine, namespace),
    body(
      kinds.packetMachine,
      {
        name,
        namespace,
        labels,
        annotations: {
          'network.metal.x-k8s.io/template': 'hybrid-bonded',
          'cluster.x-k8s.io/paused': '',
          'network.metal.x-k8s.io/hold': rfc3339(new Date()),
        },
      },
      { spec: { machineType: 'c3.small.x86', metro: METRO, os: 'ubuntu_22_04', billingCycle: 'hourly' } },
    ),
  );
  await api.post(
    path(kinds.secret, namespace),
    body(
      kinds.secret,
      { name: `${name}-bootstrap`, namespace, labels },
      { type: 'cluster.x-k8s.io/secret', stringData: { value: cabpkCloudConfig(name), format: 'cloud-config' } },
    ),
  );
  await api.post(
    path(kinds.machine, namespace),
    body(
      kinds.machine,
      { name, namespace, labels },
      {
        spec: {
          clusterName: CLUSTER,
          version: 'v1.30.4',
          bootstrap: { dataSecretName: `${name}-bootstrap` },
          infrastructureRef: { apiGroup: kinds.packetMachine.group, kind: 'PacketMachine', name },
        },
      },
    ),
  );
}

/** Creates the machines (`inflight` at a time) and times each one to Ready through a watch on the MachineNetworks. */
async function rollout({ api, namespace, count, inflight, timeoutMs, alive }) {
  const machines = new Map();
  for (let i = 0; i < count; i++) machines.set(`m-${i}`, { sentAt: NaN, createdAt: NaN, readyAt: NaN });
  let ready = 0;
  /** Machines CAPP failed, by name: their Ready message (the wait ends when the others are Ready). */
  const failed = new Map();
  let resolveAll;
  const allReady = new Promise((resolve) => (resolveAll = resolve));
  const watch = api.watchList(path(kinds.machineNetwork, namespace), (type, obj, seenAt) => {
    const name = obj?.metadata?.name;
    const entry = machines.get(name);
    if (entry === undefined || type === 'DELETED' || !Number.isNaN(entry.readyAt)) return;
    const failure = deviceFailedOf(obj);
    if (failure !== undefined) failed.set(name, failure.message);
    if (readyOf(obj)) {
      failed.delete(name);
      entry.readyAt = seenAt;
      ready++;
    }
    if (ready + failed.size === count) resolveAll();
  });
  await watch.ready;
  const names = [...machines.keys()];
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++];
      const entry = machines.get(name);
      entry.sentAt = Date.now();
      await createMachine(api, namespace, name);
      entry.createdAt = Date.now();
    }
  };
  const progress = setInterval(() => note(`... ${ready}/${count} MachineNetworks Ready, ${next}/${count} machines created`), 10_000);
  let timedOut = false;
  try {
    await Promise.all(Array.from({ length: Math.min(inflight, count) }, worker));
    const deadline = Date.now() + timeoutMs;
    while (ready + failed.size < count && !timedOut) {
      alive();
      await Promise.race([allReady, sleep(1_000)]);
      timedOut = Date.now() > deadline;
    }
  } finally {
    clearInterval(progress);
    await watch.stop();
  }
  const entries = [...machines.values()];
  const done = entries.filter((e) => !Number.isNaN(e.readyAt));
  const firstSent = Math.min(...entries.map((e) => e.sentAt));
  const lastCreated = Math.max(...entries.map((e) => e.createdAt));
  const perMachine = done.map((e) => e.readyAt - e.sentAt);
  const perSecond = [];
  for (const e of done) {
    const s = Math.floor((e.readyAt - firstSent) / 1000);
    perSecond[s] = (perSecond[s] ?? 0) + 1;
  }
  return {
    count,
    ready: done.length,
    failed: [...failed].map(([name, message]) => `${name}: ${message}`),
    timedOut,
    readyAtByName: new Map([...machines].filter(([, e]) => !Number.isNaN(e.readyAt)).map(([name, e]) => [name, e.readyAt])),
    createSeconds: (lastCreated - firstSent) / 1000,
    allReadySeconds: (Math.max(...done.map((e) => e.readyAt)) - firstSent) / 1000,
    firstReadySeconds: (Math.min(...done.map((e) => e.readyAt)) - firstSent) / 1000,
    latencyMs: { p50: percentile(perMachine, 50), p99: percentile(perMachine, 99), max: percentile(perMachine, 100) },
    readyPerSecond: Array.from(perSecond, (v) => v ?? 0),
  };
}

/** When each device became active, by device id, from the simulator store's changes (bench clock). */
function followDeviceActive(sim) {
  const activeAt = new Map();
  const stop = sim.store.subscribe((change) => {
    if (change.kind !== 'device' || change.action !== 'state' || activeAt.has(change.deviceId)) return;
    if (sim.store.devices.get(change.deviceId)?.state === 'active') activeAt.set(change.deviceId, Date.now());
  });
  return { activeAt, stop };
}

/** When CAPP (the fixture) first reported each PacketMachine's device active (status.instanceStatus), by machine name, from a watch. */
async function followCappActive(api, namespace) {
  const seenAt = new Map();
  const watch = api.watchList(path(kinds.packetMachine, namespace), (type, obj, at) => {
    const name = obj?.metadata?.name;
    if (type !== 'DELETED' && obj?.status?.instanceStatus === 'active' && !seenAt.has(name)) seenAt.set(name, at);
  });
  await watch.ready;
  return { seenAt, stop: () => watch.stop() };
}

/** Per machine, from a start time to an end time (both by machine name; the end usually its MachineNetwork seen Ready): p50/p99/max. */
function latenciesBetween(endAtByName, startOf) {
  const latencies = [];
  for (const [name, endAt] of endAtByName) {
    const start = startOf(name);
    if (start !== undefined) latencies.push(endAt - start);
  }
  return {
    measured: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: percentile(latencies, 100),
  };
}

/** Every MachineNetwork's addresses and the IPAddresses: duplicates, machines without their address. */
async function verify({ api, namespace, count }) {
  const mns = (await api.get(path(kinds.machineNetwork, namespace))).items;
  const ips = (await api.get(path(ours.address, namespace))).items;
  const problems = [];
  const owners = new Map();
  for (const mn of mns) {
    for (const a of mn.status?.addresses ?? []) owners.set(a.address, [...(owners.get(a.address) ?? []), mn.metadata.name]);
    if ((mn.status?.addresses ?? []).length !== 1)
      problems.push(`MachineNetwork ${mn.metadata.name} has ${(mn.status?.addresses ?? []).length} addresses, not 1`);
  }
  const duplicated = [...owners.entries()].filter(([, names]) => names.length > 1);
  for (const [address, names] of duplicated.slice(0, 10)) problems.push(`DUPLICATE: ${address} is the address of ${names.join(', ')}`);
  const ipValues = ips.map((a) => a.spec.address);
  const ipDuplicates = ipValues.length - new Set(ipValues).size;
  if (ipDuplicates > 0) problems.push(`DUPLICATE: ${ipDuplicates} duplicate addresses among ${ipValues.length} IPAddresses`);
  const pms = (await api.get(path(kinds.packetMachine, namespace))).items;
  const deviceIds = new Map(
    pms.filter((pm) => pm.spec?.providerID).map((pm) => [pm.metadata.name, pm.spec.providerID.replace('equinixmetal://', '')]),
  );
  const stillPaused = pms.filter((pm) => pm.metadata.annotations?.['cluster.x-k8s.io/paused'] !== undefined).length;
  return {
    machineNetworks: mns.length,
    ready: mns.filter(readyOf).length,
    addresses: owners.size,
    duplicates: duplicated.length + ipDuplicates,
    ipAddresses: ips.length,
    deviceIds,
    devices: deviceIds.size,
    stillPaused,
    missing: count - mns.length,
    problems,
  };
}

/**
 * The Metal calls each party made during the rollout, from the simulator's request log. A
 * machine's rollout cost is what the network controller called on its device until its
 * MachineNetwork was seen Ready (plus the calls tied to no device, shared by all): the drift
 * checks of machines Ready early, due from a tenth of a period on, come after and are counted apart.
 */
function metalCalls(sim, { deviceIds, count, readyAtByName }) {
  const ours = sim.requests.entries({ userAgent: CONTROLLER_AGENT });
  const byDevice = new Map();
  for (const e of ours) {
    if (e.deviceId === undefined) continue;
    if (!byDevice.has(e.deviceId)) byDevice.set(e.deviceId, []);
    byDevice.get(e.deviceId).push(e);
  }
  const untilReady = [];
  const afterReady = [];
  let worst = { name: '', total: -1, ops: {} };
  const perDevice = [];
  for (const [name, deviceId] of deviceIds) {
    const readyAt = readyAtByName.get(name) ?? Infinity;
    const calls = byDevice.get(deviceId) ?? [];
    const before = calls.filter((e) => Date.parse(e.at) <= readyAt);
    untilReady.push(...before);
    afterReady.push(...calls.filter((e) => Date.parse(e.at) > readyAt));
    perDevice.push(before.length);
    if (before.length > worst.total) worst = { name, total: before.length, ops: countOps(before) };
  }
  const withoutDevice = ours.filter((e) => e.deviceId === undefined);
  const controller = countOps([...untilReady, ...withoutDevice]);
  const capp = countOps(sim.requests.entries({ userAgent: CAPP_AGENT }));
  return {
    controller,
    controllerTotal: sumOf(controller),
    perMachine: sumOf(controller) / count,
    perDeviceP50: percentile(perDevice, 50),
    worst,
    onDevices: untilReady.length,
    withoutDevice: withoutDevice.length,
    withoutDeviceOps: byOperation(countOps(withoutDevice)),
    afterReady: afterReady.length,
    afterReadyOps: byOperation(countOps(afterReady)),
    controllerErrors: ours.filter((e) => e.status >= 400 || e.status === 0).length,
    capp,
    cappTotal: sumOf(capp),
  };
}

/**
 * Restarts the network controller (a fresh list reconciles every machine) at --log-level debug
 * and waits until its log shows a finished reconcile of every machine and its queue is empty; the
 * Metal calls it made since the restart are the steady-state figure.
 */
async function steadyResync({ sim, count, network, start }) {
  await network.stop();
  const mark = sim.requests.lastSeq();
  const startedAt = Date.now();
  const restarted = await start('debug');
  const pending = new Set(Array.from({ length: count }, (_, i) => `m-${i}`));
  let offset = 0;
  let reconciles = 0;
  let lastSeenAt = NaN;
  const readLog = async () => {
    const text = await readFile(restarted.logFile, 'utf8').catch(() => '');
    const fresh = text.slice(offset, text.lastIndexOf('\n') + 1);
    offset += fresh.length;
    for (const line of fresh.split('\n')) {
      if (!line.includes('"msg":"reconciled')) continue;
      let entry;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (entry.controller !== 'machinenetwork' || !String(entry.msg).startsWith('reconciled')) continue;
      reconciles++;
      if (pending.delete(entry.name)) lastSeenAt = Date.now();
    }
  };
  await waitUntil(
    `the restarted network controller to reconcile all ${count} machines`,
    async () => {
      restarted.assertAlive();
      await readLog();
      if (pending.size > 0) return false;
      const depth = sumOf(await scrape(restarted.metricsUrl, 'workqueue_depth'));
      const active = sumOf(await scrape(restarted.metricsUrl, 'controller_runtime_active_workers'));
      return depth === 0 && active === 0;
    },
    300_000,
  );
  // Anything the resync set off (a requeue, a late write's event) gets a moment to call out.
  await sleep(3_000);
  await readLog();
  const reconcileTotals = await scrape(restarted.metricsUrl, 'controller_runtime_reconcile_total', 'result');
  const calls = sim.requests.entries({ afterSeq: mark, userAgent: CONTROLLER_AGENT });
  const ops = countOps(calls);
  const cappCalls = sim.requests.entries({ afterSeq: mark, userAgent: CAPP_AGENT }).length;
  return {
    controller: restarted,
    calls: calls.length,
    ops,
    cappCalls,
    reconcileLines: reconciles,
    reconcileTotals,
    allSeenSeconds: (lastSeenAt - startedAt) / 1000,
  };
}

/**
 * The drift period for the measurement: the controller's 600 s default would make the bench wait
 * 20 minutes, so a short one (its flag's minimum is 10 s), long enough that one read per machine
 * per period takes half the controller's Metal client rate limit (10/s): reads paced by that
 * limit instead of by the drift schedule would say nothing about the schedule.
 */
export const driftPeriodSeconds = (count) => Math.max(10, Math.ceil(count / 5));

/** Sleeps `ms`, checking every second that the controller is still alive. */
async function aliveSleep(ms, handle) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    handle.assertAlive();
    await sleep(Math.min(1_000, until - Date.now()));
  }
}

/** Waits until the controller reconciled every machine at least once since its start and its queue is empty. */
async function waitResynced(handle, count) {
  await waitUntil(
    `the restarted network controller to reconcile all ${count} machines`,
    async () => {
      handle.assertAlive();
      const reconciled = sumOf(await scrape(handle.metricsUrl, 'controller_runtime_reconcile_total'));
      const depth = sumOf(await scrape(handle.metricsUrl, 'workqueue_depth'));
      const active = sumOf(await scrape(handle.metricsUrl, 'controller_runtime_active_workers'));
      return reconciled >= count && depth === 0 && active === 0;
    },
    300_000,
  );
}

/**
 * The drift check's cost: the network controller restarted with a short
 * --drift-check-interval-seconds; once its resync is done, a warm-up of 1.1 periods (each
 * machine's first check falls between 0.1 and 1.1 periods after its first reconcile), then the
 * Metal calls of exactly one period. Target: one read per machine, no write.
 */
async function driftPeriod({ sim, count, network, start, periodSeconds }) {
  await network.stop();
  const restarted = await start('info', ['--drift-check-interval-seconds', String(periodSeconds)]);
  await waitResynced(restarted, count);
  const periodMs = periodSeconds * 1000;
  await aliveSleep(1.1 * periodMs, restarted);
  const mark = sim.requests.lastSeq();
  await aliveSleep(periodMs, restarted);
  const end = sim.requests.lastSeq();
  const calls = sim.requests.entries({ afterSeq: mark, userAgent: CONTROLLER_AGENT }).filter((e) => e.seq <= end);
  const reads = calls.filter((e) => e.method === 'GET');
  const perDevice = new Map();
  for (const e of reads) if (e.deviceId !== undefined) perDevice.set(e.deviceId, (perDevice.get(e.deviceId) ?? 0) + 1);
  return {
    controller: restarted,
    periodSeconds,
    calls: calls.length,
    reads: reads.length,
    writes: calls.length - reads.length,
    ops: countOps(calls),
    devicesRead: perDevice.size,
    mostOnOneDevice: Math.max(0, ...perDevice.values()),
    readsPerMachine: reads.length / count,
    errors: calls.filter((e) => e.status >= 400).length,
  };
}

/** "3 10 12 ..." for up to 60 seconds, then the rest summed. */
function timeline(perSecond) {
  const shown = perSecond.slice(0, 60).join(' ');
  const rest = perSecond.slice(60).reduce((a, b) => a + b, 0);
  return perSecond.length > 60 ? `${shown} ... +${rest} in ${perSecond.length - 60} s more` : shown;
}

export async function runNetwork(options) {
  const count = options.machines;
  const inflight = Math.min(options.inflight, count);
  const timeoutMs = (options.timeoutSeconds ?? 300 + 3 * count) * 1000;
  section(`network: ${count} hybrid-bonded machines through the CAPP fixture and the Metal simulator`);
  note('starting a fresh control plane (network)');
  const cluster = await startCluster('bench-network');
  let sim;
  let ipam;
  let network;
  const networkHandles = [];
  let fixture;
  const namespace = 'bench';
  try {
    const installed = await installCrds(cluster.api, [crdDirs.capiV1_14(), crdDirs.capp(), crdDirs.ours()]);
    await createNamespace(cluster.api, namespace);
    sim = await startSimulator({
      seed: 'bench-network',
      seedConfig: {
        metros: [{ code: METRO }, { code: 'sv' }],
        plans: [{ slug: 'c3.small.x86', ports: 2 }],
        projects: [{ name: 'capi', id: PROJECT_ID }],
        tokens: [{ token: TOKEN }, { token: CAPP_TOKEN }],
      },
      ...(options.simRateLimit === undefined ? {} : { rateLimit: { ...options.simRateLimit, tokens: [TOKEN] } }),
    });
    ipam = startOurController({ kubeconfig: cluster.kubeconfig, namespace });
    const metricsPort = await freePort();
    const healthPort = await freePort();
    /** @param {string} logLevel @param {string[]} [extraFlags] */
    const start = async (logLevel, extraFlags = []) => {
      const handle = startNetworkController({
        kubeconfig: cluster.kubeconfig,
        namespace,
        metalApiUrl: sim.baseUrl,
        metadataUrl: `${sim.url}/metadata`,
        credentials: `${namespace}/${CREDENTIALS_SECRET}`,
        metricsPort,
        healthPort,
        logLevel,
        extraFlags,
      });
      networkHandles.push(handle);
      await waitUntil(
        'the network controller to answer /readyz',
        async () => {
          handle.assertAlive();
          return (await fetch(handle.readyzUrl).catch(() => undefined))?.status === 200;
        },
        120_000,
      );
      return handle;
    };
    network = await start('info');
    mkdirSync(benchLogDir, { recursive: true });
    const fixtureLogFile = join(benchLogDir, `capp-fixture-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
    const fixtureLog = createWriteStream(fixtureLogFile, { flags: 'a' });
    fixture = await startCappFixture({
      kubeConfig: await loadKubeConfig({ kubeconfig: cluster.kubeconfig }),
      namespace,
      // No client-side limit on CAPP's side: its pace must not hide the network controller's.
      metal: { baseUrl: sim.baseUrl, token: CAPP_TOKEN, rateLimit: false },
      logger: createLogger({ level: 'info', stream: fixtureLog }),
      pollIntervalMs: CAPP_POLL_MS,
    });
    const spec = await createWorld({ api: cluster.api, sim, namespace, count, ipam });
    note(
      `${installed} CRDs, pool ${spec.addresses[0]} ready, VLAN ${VXLAN} in ${METRO}; creating ${count} machines, ${inflight} in flight`,
    );

    const devices = followDeviceActive(sim);
    const cappActive = await followCappActive(cluster.api, namespace);
    const requestsBefore = await requestCounts(cluster.api, 'all');
    const cpuBefore = cpuOf(cluster, { ipam, network });
    const loadBefore = loadavg()[0];
    const at = Date.now();
    const result = await rollout({
      api: cluster.api,
      namespace,
      count,
      inflight,
      timeoutMs,
      alive: () => {
        ipam.assertAlive();
        network.assertAlive();
      },
    });
    const cpuAfter = cpuOf(cluster, { ipam, network });
    devices.stop();
    const requests = requestDelta(requestsBefore, await requestCounts(cluster.api, 'all'));
    await cappActive.stop();
    const memory = { network: network.memory(), ipam: ipam.memory() };
    const windowSeconds = (Date.now() - at) / 1000;
    const loadAfter = loadavg()[0];
    const rateLimitWait = sumOf(await scrape(network.metricsUrl, 'metal_api_rate_limit_wait_seconds_total'));
    const retries = await scrape(network.metricsUrl, 'metal_api_retries_total', 'reason');
    const rolloutReconciles = await scrape(network.metricsUrl, 'controller_runtime_reconcile_total', 'result');
    // The 429s each party saw in the rollout: the network controller's own count (its metric), the
    // in-process fixture's from the simulator's log (its client has no metrics registry here).
    const rateLimited = {
      limit: options.simRateLimit,
      network: (await scrape(network.metricsUrl, 'metal_api_requests_total', 'status'))['429'] ?? 0,
      capp: sim.requests.count({ userAgent: CAPP_AGENT, status: 429 }),
    };
    const checked = await verify({ api: cluster.api, namespace, count });
    const calls = metalCalls(sim, { deviceIds: checked.deviceIds, count, readyAtByName: result.readyAtByName });
    const fromActive = latenciesBetween(result.readyAtByName, (name) => devices.activeAt.get(checked.deviceIds.get(name)));
    const fromCappActive = latenciesBetween(result.readyAtByName, (name) => cappActive.seenAt.get(name));
    const cappLag = latenciesBetween(cappActive.seenAt, (name) => devices.activeAt.get(checked.deviceIds.get(name)));
    const rolloutCommand = network.command;
    note(`rollout done (${result.ready}/${count} Ready); restarting the network controller for the steady-state resync`);
    const steady = await steadyResync({ sim, count, network, start });
    network = steady.controller;
    const periodSeconds = driftPeriodSeconds(count);
    note(`resync done; restarting the network controller with a ${periodSeconds} s drift period to count one period's reads`);
    const drift = await driftPeriod({ sim, count, network, start, periodSeconds });
    network = drift.controller;
    const r = {
      count,
      inflight,
      command: rolloutCommand,
      logFiles: [ipam.logFile, ...networkHandles.map((h) => h.logFile), fixtureLogFile],
      rollout: result,
      fromActive,
      fromCappActive,
      cappLag,
      requests,
      memory,
      verify: checked,
      calls,
      steady,
      drift,
      rateLimitWait,
      retries,
      rolloutReconciles,
      rateLimited,
      cpu: Object.fromEntries(Object.keys(cpuAfter).map((k) => [k, cpuAfter[k] - cpuBefore[k]])),
      windowSeconds,
      loadBefore,
      loadAfter,
      spec,
    };
    printNetwork(r);
    return r;
  } finally {
    await fixture?.stop().catch(() => undefined);
    for (const handle of networkHandles) await handle.stop();
    await ipam?.stop();
    await sim?.close();
    await cluster.stop();
  }
}

function cpuOf(cluster, { ipam, network }) {
  return {
    'network controller': cpuSeconds(network.pid),
    'IPAM controller': cpuSeconds(ipam.pid),
    'kube-apiserver': cpuSeconds(cluster.pids['kube-apiserver']),
    etcd: cpuSeconds(cluster.pids.etcd),
    'bench (fixture, simulator, creates)': process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
  };
}

/** --sim-rate-limit as the table shows it. */
export const rateLimitText = (limit) =>
  limit === undefined
    ? 'off, --sim-rate-limit'
    : `${limit.requestsPerSecond}/s, burst ${limit.burst}, on the network controller's API token (CAPP's has none: it cannot take a 429)`;

/**
 * The API server's requests during the rollout, every client (the bench's creates, both
 * controllers, the fixture), per machine with their mean server time: the ten most frequent.
 */
function requestRows(requests, count) {
  const writes = requests.filter((r) => !r.key.startsWith('GET ') && !r.key.startsWith('LIST '));
  const total = writes.reduce((a, r) => a + r.count, 0);
  return [
    ['API server writes during the rollout, all clients (the most frequent below)', `${num(total)} = ${num(total / count, 1)} per machine`],
    ...writes.slice(0, 10).map((r) => [`  ${r.key}`, `${num(r.count / count, 2)} per machine, mean ${ms(r.meanMs)} in the server`]),
  ];
}

/** The drift period's rows of the network table. */
function driftRows(d, count) {
  return [
    [
      `drift check: restarted with --drift-check-interval-seconds ${d.periodSeconds}, one period (after 1.1 periods of warm-up)`,
      `${num(d.reads)} reads = ${num(d.readsPerMachine, 2)} per machine, ${num(d.writes)} writes`,
    ],
    ['  by operation', d.calls > 0 ? byOperation(d.ops) : 'none'],
    [
      '  devices read / most reads of one device / error answers',
      `${num(d.devicesRead)} of ${num(count)} / ${num(d.mostOnOneDevice)} / ${num(d.errors)}`,
    ],
  ];
}

function printNetwork(r) {
  const { rollout: ro, verify: v, calls: c, steady: s, drift: d, fromActive: fa, fromCappActive: fc, cappLag: lag } = r;
  console.log(`$ ${r.command}`);
  console.log(
    'No webhook runs in this bench (--webhook-port 0): each PacketMachine is created already carrying what our webhook adds, ' +
      `cluster.x-k8s.io/paused: "" and network.metal.x-k8s.io/hold: <RFC 3339 now>. ` +
      `Simulator delays are its defaults (device queued ${DEFAULT_DELAYS.deviceQueuedMs} ms + provisioning ${DEFAULT_DELAYS.deviceProvisioningMs} ms, ` +
      `VLAN batch queued ${DEFAULT_DELAYS.batchQueuedMs} ms + in progress ${DEFAULT_DELAYS.batchInProgressMs} ms); the CAPP fixture polls devices every ${CAPP_POLL_MS} ms (CAPP: 10 s); ` +
      "the network controller's Metal client keeps its default rate limit (10/s, burst 20), the fixture's has none.",
  );
  printTable(
    ['figure', 'value'],
    [
      ['MachineNetworks Ready', `${num(ro.ready)} of ${num(ro.count)}${ro.timedOut ? ' (timed out)' : ''}`],
      [
        'machines CAPP failed (Ready=False DeviceFailed)',
        ro.failed.length === 0 ? '0' : `${ro.failed.length}: ${ro.failed.slice(0, 3).join('; ')}`,
      ],
      ['machines created (PacketMachine + Secret + Machine), from first create', `${sec(ro.createSeconds)} (${r.inflight} in flight)`],
      ['first / all MachineNetworks Ready, from first create', `${sec(ro.firstReadySeconds)} / ${sec(ro.allReadySeconds)}`],
      ['per machine, create -> Ready: p50 / p99 / max', `${ms(ro.latencyMs.p50)} / ${ms(ro.latencyMs.p99)} / ${ms(ro.latencyMs.max)}`],
      [
        'per machine, device active (simulator) -> Ready: p50 / p99 / max',
        `${ms(fa.p50)} / ${ms(fa.p99)} / ${ms(fa.max)} (${num(fa.measured)} machines)`,
      ],
      [
        '  of which device active -> CAPP fixture reports it (PacketMachine instanceStatus): p50 / p99 / max',
        `${ms(lag.p50)} / ${ms(lag.p99)} / ${ms(lag.max)}`,
      ],
      ['  and CAPP fixture reports active -> Ready: p50 / p99 / max', `${ms(fc.p50)} / ${ms(fc.p99)} / ${ms(fc.max)}`],
      ['MachineNetworks Ready in each second from the first create', timeline(ro.readyPerSecond)],
      ['devices created / PacketMachines still paused', `${num(v.devices)} / ${num(v.stillPaused)}`],
      ['addresses / IPAddresses / duplicates', `${num(v.addresses)} / ${num(v.ipAddresses)} / ${num(v.duplicates)}`],
      [
        'Metal calls of the network controller, each device until its machine was Ready',
        `${num(c.controllerTotal)} = ${num(c.perMachine, 2)} per machine`,
      ],
      ...Object.entries(c.controller)
        .sort((a, b) => b[1] - a[1])
        .map(([op, n]) => [`  ${op}`, `${num(n)} = ${num(n / r.count, 2)} per machine`]),
      [
        '  on a device / not tied to one (by operation)',
        `${num(c.onDevices)} / ${num(c.withoutDevice)}${c.withoutDevice > 0 ? ` (${c.withoutDeviceOps})` : ''}`,
      ],
      [
        '  on a device after its machine was Ready (drift checks while the rollout went on)',
        `${num(c.afterReady)}${c.afterReady > 0 ? ` (${c.afterReadyOps})` : ''}`,
      ],
      ['  per device p50 / max', `${num(c.perDeviceP50)} / ${num(c.worst.total)} (${c.worst.name}: ${byOperation(c.worst.ops)})`],
      [
        '  answered with an error status / retried',
        `${num(c.controllerErrors)} / ${num(sumOf(r.retries))}${sumOf(r.retries) > 0 ? ` (${byOperation(r.retries)})` : ''}`,
      ],
      ['  time held back by its client-side rate limit (sum over calls)', sec(r.rateLimitWait)],
      ['  reconciles during the rollout', byOperation(r.rolloutReconciles)],
      [
        `429s seen in the rollout (simulated rate limit: ${rateLimitText(r.rateLimited.limit)})`,
        `network controller ${num(r.rateLimited.network)} (metal_api_requests_total{status="429"}), CAPP fixture ${num(r.rateLimited.capp)} (simulator log)`,
      ],
      [
        'network controller / IPAM controller peak RSS (VmHWM) over the rollout',
        `${mib(r.memory.network.peakKiB)} / ${mib(r.memory.ipam.peakKiB)}`,
      ],
      [
        'Metal calls of the CAPP fixture (User-Agent cluster-api-provider-packet/...)',
        `${num(c.cappTotal)} = ${num(c.cappTotal / r.count, 2)} per machine`,
      ],
      ...Object.entries(c.capp)
        .sort((a, b) => b[1] - a[1])
        .map(([op, n]) => [`  ${op}`, `${num(n)} = ${num(n / r.count, 2)} per machine`]),
      [
        'steady-state resync: network controller restarted, every machine reconciled',
        `${sec(s.allSeenSeconds)} after the restart (${num(s.reconcileLines)} reconciles: ${byOperation(s.reconcileTotals)})`,
      ],
      ['  Metal calls of the network controller since the restart', `${num(s.calls)}${s.calls > 0 ? ` (${byOperation(s.ops)})` : ''}`],
      ['  Metal calls of the CAPP fixture meanwhile', num(s.cappCalls)],
      ...driftRows(d, r.count),
      [
        `CPU seconds in the ${sec(r.windowSeconds)} from first create to all Ready`,
        Object.entries(r.cpu)
          .map(([k, n]) => `${k} ${num(n, 1)}`)
          .join(', '),
      ],
      ...requestRows(r.requests, r.count),
      ['machine load average (1 min) before -> after', `${num(r.loadBefore, 1)} -> ${num(r.loadAfter, 1)} on ${cpus().length} CPUs`],
    ],
  );
  if (v.problems.length > 0) console.log(`found:\n  ${v.problems.slice(0, 10).join('\n  ')}`);
  console.log(
    'target (DESIGN §5): at most 3 Metal calls per machine (one read, one VLAN batch, one poll), 0 in a steady-state resync, ' +
      'one read per machine per drift period, network controller under 256 MiB RSS',
  );
  console.log(`logs: ${r.logFiles.join(' ')}`);
}
