// The write floor: what the same machine's control plane does with plain writes and no controller.
// A fresh local control plane, N ConfigMaps created from the bench's bare client (api.js) with the
// same number of creates in flight as the claim burst; writes/s and per-write latency. The burst's
// claims/s divided by this rate says how close to the API server's own limit the controller gets
// (each bound claim costs about 4 writes: the bench's create, the controller's IPAddress create
// and two claim patches).
import { cpus, loadavg } from 'node:os';
import { percentile } from './burst.js';
import { createNamespace, startCluster } from './cluster.js';
import { cpuSeconds } from './server-metrics.js';
import { ms, num, printTable, rate, sec, section } from './table.js';

const note = (text) => process.stderr.write(`  ${text}\n`);

/** Creates `count` ConfigMaps, at most `inflight` at a time; returns rate and latency figures. */
async function plainWrites({ api, namespace, count, inflight }) {
  const path = `/api/v1/namespaces/${namespace}/configmaps`;
  const latencies = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const sent = Date.now();
      await api.post(path, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `w-${i}`, namespace }, data: { i: String(i) } });
      latencies.push(Date.now() - sent);
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: Math.min(inflight, count) }, worker));
  const seconds = (Date.now() - started) / 1000;
  return {
    count,
    seconds,
    writesPerSecond: rate(count, seconds),
    latencyMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: percentile(latencies, 100) },
  };
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
    return { ...writes, command, loadBefore, loadAfter };
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
    floorWritesPerSecond: floorResult.writesPerSecond,
    fraction: claimsPerSecond / floorResult.writesPerSecond,
    writesPerClaim,
    writeShare: (claimsPerSecond * writesPerClaim) / floorResult.writesPerSecond,
  };
}
