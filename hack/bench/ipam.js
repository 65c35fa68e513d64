// (b) throughput and (c) memory, each on a fresh local control plane with the controller under
// test run as a child process; the reference comparison (reference.js) runs its bursts here too.
import { cpus, loadavg } from 'node:os';
import { createPool, poolFor, runBurst, verifyBurst } from './burst.js';
import { cpuSeconds, forcedWatchCloses, requestCounts, requestDelta, watchDelta } from './server-metrics.js';
import { createNamespace, crdDirs, installCrds, startCluster } from './cluster.js';
import { startOurController } from './controllers.js';
import { ours } from './targets.js';
import { mib, ms, num, printTable, rate, sec, section } from './table.js';

const note = (text) => process.stderr.write(`  ${text}\n`);

/**
 * Starts a control plane, installs CRDs, runs the controller, creates the pool, runs the burst.
 * `stopAfterMs` bounds a slow controller's run (see runBurst).
 * @param {{ label: string, crds: any[], target: any, start: any, count: number, ratePerSecond?: number, stopAfterMs?: number, options: any }} run
 */
export async function burstOnFreshCluster({ label, crds, target, start, count, ratePerSecond, stopAfterMs, options }) {
  note(`starting a fresh control plane (${label})`);
  const cluster = await startCluster(`bench-${label}`);
  let controller;
  try {
    const installed = await installCrds(cluster.api, crds);
    const namespace = await createNamespace(cluster.api, 'bench');
    controller = start({ kubeconfig: cluster.kubeconfig, namespace });
    const spec = poolFor(count);
    await createPool({ api: cluster.api, namespace, target, name: 'bench', spec, controller });
    const idle = controller.memory();
    const loadBefore = loadavg()[0];
    const how = ratePerSecond === undefined ? `${options.inflight} in flight` : `${ratePerSecond} per second`;
    note(`${installed} CRDs, pool ${spec.addresses[0]} ready; creating ${count} claims, ${how}`);
    const burst = await runBurst({
      api: cluster.api,
      namespace,
      target,
      pool: 'bench',
      count,
      inflight: options.inflight,
      ratePerSecond,
      timeoutMs: options.timeoutMs(count),
      stopAfterMs,
      controller,
      snapshot: async () => ({ requests: await requestCounts(cluster.api), cpu: cpuOf(cluster, controller), at: Date.now() }),
    });
    const { before, after } = burst.snapshots;
    const requests = requestDelta(before.requests, after.requests, new Map([[`POST ${target.claim.plural} 201`, count]]));
    const watchEvents = watchDelta(before.requests, after.requests);
    const cpu = Object.fromEntries(Object.keys(after.cpu).map((k) => [k, after.cpu[k] - before.cpu[k]]));
    const windowSeconds = (after.at - before.at) / 1000;
    const forcedCloses = await forcedWatchCloses(cluster.apiserverLog, `${target.claim.plural}.${target.claim.group}`);
    const loadAfter = loadavg()[0];
    const verify = await verifyBurst({ api: cluster.api, namespace, target, pool: 'bench', spec });
    controller.assertAlive();
    const memory = controller.memory();
    return {
      label: target.label,
      command: controller.command,
      logFile: controller.logFile,
      spec,
      burst,
      verify,
      idle,
      memory,
      loadBefore,
      loadAfter,
      requests,
      watchEvents,
      forcedCloses,
      cpu,
      windowSeconds,
    };
  } finally {
    await controller?.stop();
    await cluster.stop();
  }
}

/** CPU seconds used so far by the processes that take part in a burst. */
function cpuOf(cluster, controller) {
  return {
    controller: cpuSeconds(controller.pid),
    'kube-apiserver': cpuSeconds(cluster.pids['kube-apiserver']),
    etcd: cpuSeconds(cluster.pids.etcd),
    'bench (this process)': process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
  };
}

/** "12 40 38 ..." for up to 60 seconds, then the rest summed. */
function timeline(perSecond) {
  const shown = perSecond.slice(0, 60).join(' ');
  const rest = perSecond.slice(60).reduce((a, b) => a + b, 0);
  return perSecond.length > 60 ? `${shown} ... +${rest} in ${perSecond.length - 60} s more` : shown;
}

const total = (requests) => requests.reduce((sum, r) => sum + r.count, 0);

/** The controller's API requests (claim creates left out) per claim it bound in the window. */
export const requestsPerClaim = (r) => total(r.requests) / r.burst.bound;

/** For a run bounded with --reference-seconds: what was measured. */
const boundedNote = (burst) =>
  burst.stoppedEarly ? ` (measurement stopped ${sec(burst.stopAfterMs / 1000)} after the first create: --reference-seconds)` : '';

/** Rows shared by the throughput and memory tables. */
function burstRows(r) {
  const { burst, verify } = r;
  return [
    ['claims bound', `${num(burst.bound)} of ${num(burst.count)}${burst.timedOut ? ' (timed out)' : ''}${boundedNote(burst)}`],
    ['pool', `${r.spec.addresses[0]}, gateway ${r.spec.gateway}`],
    ['all created (from first create)', sec(burst.createSeconds)],
    [
      'all bound, from first create',
      `${sec(burst.fromFirstCreateSeconds)} -> ${num(rate(burst.bound, burst.fromFirstCreateSeconds))} claims/s`,
    ],
    [
      'all bound, from last create',
      `${sec(burst.afterLastCreateSeconds)} -> ${num(rate(burst.bound, burst.afterLastCreateSeconds))} claims/s`,
    ],
    [
      'claim-to-bound p50 / p99 / max (creationTimestamp)',
      `${ms(burst.latencyMs.creationTimestamp.p50)} / ${ms(burst.latencyMs.creationTimestamp.p99)} / ${ms(burst.latencyMs.creationTimestamp.max)}`,
    ],
    [
      'claim-to-bound p50 / p99 / max (create request sent)',
      `${ms(burst.latencyMs.request.p50)} / ${ms(burst.latencyMs.request.p99)} / ${ms(burst.latencyMs.request.max)}`,
    ],
    ['claims bound in each second from the first create', timeline(burst.boundPerSecond)],
    [
      'IPAddresses / distinct addresses / duplicates',
      `${num(verify.ipAddresses)} / ${num(verify.distinctAddresses)} / ${num(verify.duplicates)}`,
    ],
    ['pool status', verify.poolSummary],
    ['controller RSS idle -> peak (VmHWM)', `${mib(r.idle.currentKiB)} -> ${mib(r.memory.peakKiB)}`],
    [
      'API requests of the controller (claim creates left out)',
      `${num(total(r.requests))} = ${num(requestsPerClaim(r), 1)} per claim bound`,
    ],
    ...r.requests.slice(0, 8).map(({ key, count, meanMs }) => [`  ${key}`, `${num(count)} (server time ${ms(meanMs)} mean)`]),
    [
      'claim watches the API server force-closed as too slow',
      `${num(r.forcedCloses)} (the bench's own watch resumed ${num(burst.watchRestarts)} times)`,
    ],
    [
      `CPU seconds in the ${sec(r.windowSeconds)} from first create to all bound`,
      Object.entries(r.cpu)
        .map(([k, v]) => `${k} ${num(v, 1)}`)
        .join(', '),
    ],
    ['machine load average (1 min) before -> after', `${num(r.loadBefore, 1)} -> ${num(r.loadAfter, 1)} on ${cpus().length} CPUs`],
  ];
}

export function printBurst(r, extra = []) {
  console.log(`$ ${r.command}`);
  printTable(['figure', 'value'], [...burstRows(r), ...extra]);
  if (r.verify.problems.length > 0) console.log(`PROBLEMS:\n  ${r.verify.problems.slice(0, 10).join('\n  ')}`);
  console.log(`controller log: ${r.logFile}`);
  console.log('(creationTimestamp has 1 s resolution, so that latency reads up to 1 s high; the second is from the client clock)');
}

export async function runOurBurst(options, count = options.claims ?? 1000) {
  section(`IPAM throughput: ${count} claims at once on one pool (metal-l2, CAPI v1.14 CRDs)`);
  const r = await burstOnFreshCluster({
    label: 'burst',
    crds: [crdDirs.capiV1_14(), crdDirs.ours()],
    target: ours,
    start: startOurController,
    count,
    options,
  });
  printBurst(r);
  return r;
}

export async function runMemory(options) {
  const count = options.claims ?? 10_000;
  section(`memory: ${count} claims bound on one pool (metal-l2, peak RSS of the controller process)`);
  const r = await burstOnFreshCluster({
    label: 'memory',
    crds: [crdDirs.capiV1_14(), crdDirs.ours()],
    target: ours,
    start: startOurController,
    count,
    options,
  });
  printBurst(r, [['target', 'peak RSS < 256 MiB']]);
  return r;
}

/**
 * Normal use rather than a flood: claims arriving at a steady rate (default 20/s for 60 s), each
 * create sent on schedule whatever became of the earlier ones; p50/p99 claim-to-bound.
 */
export async function runSteady(options) {
  const count = Math.round(options.rate * options.duration);
  section(`IPAM latency: claims arriving at ${options.rate}/s for ${options.duration} s (${count} claims, metal-l2, CAPI v1.14 CRDs)`);
  const r = await burstOnFreshCluster({
    label: 'steady',
    crds: [crdDirs.capiV1_14(), crdDirs.ours()],
    target: ours,
    start: startOurController,
    count,
    ratePerSecond: options.rate,
    options,
  });
  printBurst(r, [
    ['arrival', `${options.rate} claims/s for ${options.duration} s, paced (latest create sent ${ms(r.burst.paceLagMs)} after its time)`],
    ['target', 'p99 claim-to-bound < 500 ms (create request sent)'],
  ]);
  return r;
}
