// The write floor: what the same machine's control plane does with plain writes and no controller.
// A fresh local control plane, N ConfigMaps created from the bench's bare client (api.js) with the
// same number of creates in flight as the claim burst; writes/s and per-write latency. The burst's
// claims/s divided by this rate says how close to the API server's own limit the controller gets
// (each bound claim costs about 4 writes: the bench's create, the controller's IPAddress create
// and two claim patches).
import { cpus, loadavg } from 'node:os';
import { percentile } from './burst.js';
import { resourcePath } from './api.js';
import { createNamespace, crdDirs, installCrds, startCluster } from './cluster.js';
import { ours } from './targets.js';
import { cpuSeconds, requestCounts, requestDelta, watchDelta } from './server-metrics.js';
import { ms, num, printTable, rate, sec, section } from './table.js';

const note = (text) => process.stderr.write(`  ${text}\n`);

// What the controller puts on a claim it is about to bind (IpamFinalizers.releaseAddress).
const IPAM_RELEASE_FINALIZER = 'ipam.metal.x-k8s.io/release-address';

/** Creates `count` ConfigMaps, at most `inflight` at a time; returns rate and latency figures. */
async function plainWrites({ api, namespace, count, inflight }) {
  const path = `/api/v1/namespaces/${namespace}/configmaps`;
  const timed = await inLanes({ count, inflight }, (i) =>
    api.post(path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${i}`, namespace }, data: { i: String(i) } }),
  );
  return { ...timed, writesPerSecond: timed.perSecond };
}

/**
 * Runs `one(i)` for i in 0..count-1, `inflight` lanes each doing one after the other; the rate of
 * whole items and each item's latency.
 * @param {{ count: number, inflight: number }} size
 * @param {(i: number) => Promise<unknown>} one
 */
async function inLanes({ count, inflight }, one) {
  const latencies = [];
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const sent = Date.now();
      await one(i);
      latencies.push(Date.now() - sent);
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: Math.min(inflight, count) }, lane));
  const seconds = (Date.now() - started) / 1000;
  return {
    count,
    seconds,
    perSecond: rate(count, seconds),
    latencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: percentile(latencies, 100) },
  };
}

/**
 * The writes a bound claim needs, done by a bare client with no controller and nothing to decide:
 * the claim's create (the bench's part in the burst too), then the controller's three (finalizer
 * patch, IPAddress create, status patch), one claim after the other in each of `inflight` lanes.
 * DESIGN.md §5 sets the burst against this: at least 0.9 of it.
 */
async function claimWrites({ api, namespace, count, inflight, prefix = 'c' }) {
  const { claim, address, pool } = ours;
  const claimsPath = resourcePath({ ...claim, namespace });
  const addressesPath = resourcePath({ ...address, namespace });
  const poolRef = { apiGroup: pool.group, kind: pool.kind, name: 'floor' };
  const timed = await inLanes({ count, inflight }, async (i) => {
    const name = `${prefix}-${i}`;
    await api.post(claimsPath, {
      apiVersion: `${claim.group}/${claim.version}`,
      kind: 'IPAddressClaim',
      metadata: { name, namespace },
      spec: { poolRef },
    });
    await api.mergePatch(`${claimsPath}/${name}`, { metadata: { finalizers: [IPAM_RELEASE_FINALIZER] } });
    const spec = { address: `10.0.${i >> 8}.${i & 255}`, prefix: 16, gateway: '10.0.255.254', claimRef: { name }, poolRef };
    await api.post(addressesPath, {
      apiVersion: `${address.group}/${address.version}`,
      kind: 'IPAddress',
      metadata: { name, namespace },
      spec,
    });
    const ready = {
      type: 'Ready',
      status: 'True',
      reason: 'AddressAllocated',
      message: '',
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    await api.mergePatch(`${claimsPath}/${name}/status`, { status: { addressRef: { name }, conditions: [ready] } });
  });
  return { ...timed, claimsPerSecond: timed.perSecond };
}

export async function runFloor(options) {
  const count = options.claims ?? 1000;
  section(`write floor: ${count} plain writes (ConfigMap creates, ${options.inflight} in flight) from a bare client, no controller`);
  note('starting a fresh control plane (floor)');
  const cluster = await startCluster('bench-floor');
  try {
    const namespace = await createNamespace(cluster.api, 'floor');
    const cpu = () => ({
      'kube-apiserver': cpuSeconds(cluster.pids['kube-apiserver']),
      etcd: cpuSeconds(cluster.pids['etcd']),
      'bench (this process)': (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    });
    const loadBefore = loadavg()[0];
    const before = cpu();
    const writes = await plainWrites({ api: cluster.api, namespace, count, inflight: options.inflight });
    const after = cpu();
    const loadAfter = loadavg()[0];
    await installCrds(cluster.api, [crdDirs.capiV1_14(), crdDirs.ours()]);
    const claimNamespace = await createNamespace(cluster.api, 'claim-floor');
    // The first writes to a fresh CRD pay for its handler; the burst's controller has warmed it
    // with its watches by then, so the floor warms it too, unmeasured.
    await claimWrites({ api: cluster.api, namespace: claimNamespace, count: options.inflight, inflight: options.inflight, prefix: 'warm' });
    const claimsBefore = cpu();
    const requestsBefore = await requestCounts(cluster.api);
    const written = await claimWrites({ api: cluster.api, namespace: claimNamespace, count, inflight: options.inflight });
    const requestsAfter = await requestCounts(cluster.api);
    const claimsAfter = cpu();
    const claims = {
      ...written,
      requests: requestDelta(requestsBefore, requestsAfter),
      cpu: Object.fromEntries(Object.keys(claimsAfter).map((k) => [k, claimsAfter[k] - claimsBefore[k]])),
      watchEvents: watchDelta(requestsBefore, requestsAfter),
    };
    const claimsCommand = `per claim: POST ipaddressclaims, PATCH its finalizers, POST ipaddresses, PATCH its status; ${count} claims, ${options.inflight} in flight (hack/bench/floor.js)`;
    const command = `POST /api/v1/namespaces/floor/configmaps x ${count}, ${options.inflight} in flight (hack/bench/api.js)`;
    console.log(`$ ${command}`);
    printTable(
      ['figure', 'value'],
      [
        ['writes', `${num(count)} in ${sec(writes.seconds)} -> ${num(writes.writesPerSecond)} writes/s`],
        ['write latency p50 / p99 / max', `${ms(writes.latencyMs.p50)} / ${ms(writes.latencyMs.p99)} / ${ms(writes.latencyMs.max)}`],
        [
          `CPU seconds in the ${sec(writes.seconds)}`,
          Object.keys(after)
            .map((k) => `${k} ${num(after[k] - before[k], 1)}`)
            .join(', '),
        ],
        ['machine load average (1 min) before -> after', `${num(loadBefore, 1)} -> ${num(loadAfter, 1)} on ${cpus().length} CPUs`],
      ],
    );
    console.log(`$ ${claimsCommand}`);
    printTable(
      ['figure', 'value'],
      [
        [
          'claims written (4 writes each, CAPI v1.14 CRDs)',
          `${num(count)} in ${sec(claims.seconds)} -> ${num(claims.claimsPerSecond)} claims/s`,
        ],
        ['per-claim latency p50 / p99 / max', `${ms(claims.latencyMs.p50)} / ${ms(claims.latencyMs.p99)} / ${ms(claims.latencyMs.max)}`],
        [
          `CPU seconds in the ${sec(claims.seconds)}`,
          Object.keys(claimsAfter)
            .map((k) => `${k} ${num(claimsAfter[k] - claimsBefore[k], 1)}`)
            .join(', '),
        ],
      ],
    );
    return { ...writes, command, loadBefore, loadAfter, claims: { ...claims, command: claimsCommand } };
  } finally {
    await cluster.stop();
  }
}

/**
 * The burst against the floor: claims/s as a fraction of plain writes/s, and the share of the
 * floor's write rate the burst used counting every write a bound claim took (the bench's create
 * plus the controller's writes, from the API server's counters).
 */
export function floorComparison(burstResult, floorResult) {
  const claimsPerSecond = rate(burstResult.burst.bound, burstResult.burst.fromFirstCreateSeconds);
  const controllerWrites = burstResult.requests
    .filter(({ key }) => /^(POST|PUT|PATCH|DELETE) /.test(key))
    .reduce((sum, { count }) => sum + count, 0);
  const writesPerClaim = 1 + controllerWrites / burstResult.burst.count;
  return {
    claimsPerSecond,
    floorClaimsPerSecond: floorResult.claims.claimsPerSecond,
    claimFraction: claimsPerSecond / floorResult.claims.claimsPerSecond,
    floorWritesPerSecond: floorResult.writesPerSecond,
    fraction: claimsPerSecond / floorResult.writesPerSecond,
    writesPerClaim,
    writeShare: (claimsPerSecond * writesPerClaim) / floorResult.writesPerSecond,
  };
}

/** "PATCH ipaddressclaims/status 200" -> "PATCH ipaddressclaims/status" (codes apart: a 409 is a write too). */
const opOf = (key) => key.slice(0, key.lastIndexOf(' '));

/** Requests ([{ key, count }]) by operation, with the response codes other than 2xx noted. */
function byOperation(requests) {
  const ops = new Map();
  for (const { key, count } of requests) {
    const op = opOf(key);
    const code = key.slice(key.lastIndexOf(' ') + 1);
    const entry = ops.get(op) ?? { count: 0, failed: new Map() };
    entry.count += count;
    if (!code.startsWith('2')) entry.failed.set(code, (entry.failed.get(code) ?? 0) + count);
    ops.set(op, entry);
  }
  return ops;
}

const isWrite = (op) => /^(POST|PUT|PATCH|DELETE|APPLY) /.test(op);

/**
 * Per claim, the API requests (writes first) and watch events of the burst beside those of the
 * claim-write floor: what the controller costs the API server beyond the claim's own four writes.
 * The burst's claim creates (left out of its request counts as the bench's own) are put back, as
 * the floor counts its own.
 */
export function perClaimRows(burstResult, floorResult) {
  const { claim } = ours;
  const burstClaims = burstResult.burst.bound;
  const floorClaims = floorResult.claims.count;
  const burstOps = byOperation([...burstResult.requests, { key: `POST ${claim.plural} 201`, count: burstResult.burst.count }]);
  const floorOps = byOperation(floorResult.claims.requests);
  const ops = [...new Set([...burstOps.keys(), ...floorOps.keys()])].sort(
    (a, b) => Number(isWrite(b)) - Number(isWrite(a)) || (burstOps.get(b)?.count ?? 0) - (burstOps.get(a)?.count ?? 0),
  );
  const cell = (entry, claims) => {
    if (entry === undefined) return '0';
    const failed = [...entry.failed].map(([code, n]) => `${num(n / claims, 2)} ${code}`).join(', ');
    return `${num(entry.count / claims, 2)}${failed === '' ? '' : ` (${failed})`}`;
  };
  const sumOf = (map, filter) => [...map].filter(([op]) => filter(op)).reduce((s, [, e]) => s + e.count, 0);
  const rows = ops.map((op) => [op, cell(burstOps.get(op), burstClaims), cell(floorOps.get(op), floorClaims)]);
  rows.push(['writes, all', num(sumOf(burstOps, isWrite) / burstClaims, 2), num(sumOf(floorOps, isWrite) / floorClaims, 2)]);
  rows.push([
    'reads, all (watches not counted)',
    num(sumOf(burstOps, (op) => !isWrite(op)) / burstClaims, 2),
    num(sumOf(floorOps, (op) => !isWrite(op)) / floorClaims, 2),
  ]);
  const kinds = [...new Set([...burstResult.watchEvents.keys(), ...floorResult.claims.watchEvents.keys()])].sort();
  for (const kind of kinds) {
    const b = burstResult.watchEvents.get(kind);
    const f = floorResult.claims.watchEvents.get(kind);
    const text = (e, n) => (e === undefined ? '0' : `${num(e.count / n, 2)} (${num(e.bytes / n / 1024, 1)} KiB)`);
    rows.push([`watch events sent: ${kind}`, text(b, burstClaims), text(f, floorClaims)]);
  }
  // CPU per claim does not depend on how much of the machine others take, as rates do.
  for (const process of ['kube-apiserver', 'etcd', 'controller']) {
    const cpu = (r, n) => (r?.[process] === undefined ? 'n/a' : `${num((1000 * r[process]) / n, 1)} ms`);
    rows.push([`CPU per claim: ${process}`, cpu(burstResult.cpu, burstClaims), cpu(floorResult.claims.cpu, floorClaims)]);
  }
  return rows;
}
