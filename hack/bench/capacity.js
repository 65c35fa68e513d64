// Issue 21: a pool holds its whole range, and a commit's cost does not grow with the pool's fill.
//   capacity  a /16 (65,534 addresses) filled with as many claims whose names are 253 characters:
//             bound count, time, controller peak RSS, with the chart's heap budget (issue 32: the
//             chart's default memory limit, 256 MiB, holds it).
//   fill      the 1,000-claim burst on an empty pool, then on the same pool once it holds 20,000
//             more allocations (seeded by a burst of 20,000 pre-created claims that the controller
//             binds, not timed), and their ratio.
import { loadavg } from 'node:os';
import { createPool, runBurst, verifyBurst } from './burst.js';
import { createNamespace, crdDirs, installCrds, startCluster } from './cluster.js';
import { POD_HEAP_MIB, startOurController } from './controllers.js';
import { cpuSeconds, requestCounts, requestDelta } from './server-metrics.js';
import { ours } from './targets.js';
import { mib, num, printTable, rate, sec, section } from './table.js';

const note = (text) => process.stderr.write(`  ${text}\n`);

/** A claim name of exactly `length` characters ending in `-<i>` (a DNS subdomain). */
export function longName(i, length) {
  const suffix = `-${i}`;
  return `${'c'.repeat(length - suffix.length)}${suffix}`;
}

/** A fresh control plane with our CRDs and our controller; `use` runs with them, then both stop. */
async function withOurCluster(label, controllerOptions, use) {
  note(`starting a fresh control plane (${label})`);
  const cluster = await startCluster(`bench-${label}`);
  let controller;
  try {
    await installCrds(cluster.api, [crdDirs.capiV1_14(), crdDirs.ours()]);
    const namespace = await createNamespace(cluster.api, 'bench');
    controller = startOurController({ kubeconfig: cluster.kubeconfig, namespace, ...controllerOptions });
    return await use({ cluster, namespace, controller });
  } finally {
    await controller?.stop();
    await cluster.stop();
  }
}

export async function runCapacity(options) {
  const count = options.claims ?? 65_534;
  // The smallest pool the claims fill (without a gateway, a /16 has 65,534 addresses to hand out).
  const prefix = 32 - Math.ceil(Math.log2(count + 2));
  const spec = { addresses: [`10.0.0.0/${prefix}`], prefix };
  section(`capacity: a /${prefix} pool (${num(2 ** (32 - prefix) - 2)} addresses) and ${num(count)} claims with 253-character names`);
  // The chart's heap budget (controllers.js), so the figure says whether the chart's default
  // memory limit holds a full /16; --capacity-heap-mib measures with another.
  const heapMiB = options.capacityHeapMiB ?? POD_HEAP_MIB;
  return withOurCluster('capacity', { heapMiB }, async ({ cluster, namespace, controller }) => {
    await createPool({ api: cluster.api, namespace, target: ours, name: 'bench', spec, controller });
    const idle = controller.memory();
    const cpuBefore = cpuSeconds(controller.pid);
    const burst = await runBurst({
      api: cluster.api,
      namespace,
      target: ours,
      pool: 'bench',
      count,
      inflight: options.inflight,
      timeoutMs: (options.timeoutSeconds ?? 600 + 0.2 * count) * 1000,
      controller,
      ratePerSecond: undefined,
      snapshot: undefined,
      nameOf: (i) => longName(i, 253),
    });
    const cpu = cpuSeconds(controller.pid) - cpuBefore;
    const memory = controller.memory();
    const verify = await verifyBurst({ api: cluster.api, namespace, target: ours, pool: 'bench', spec: { ...spec, gateway: '' } });
    controller.assertAlive();
    const result = { command: controller.command, burst, verify, idle, memory, cpu, spec, heapMiB };
    console.log(`$ ${controller.command}`);
    printTable(
      ['figure', 'value'],
      [
        ['claims bound', `${num(burst.bound)} of ${num(count)}${burst.timedOut ? ' (timed out)' : ''}`],
        [
          'all bound, from first create',
          `${sec(burst.fromFirstCreateSeconds)} -> ${num(rate(burst.bound, burst.fromFirstCreateSeconds))} claims/s`,
        ],
        ['IPAddresses / duplicates', `${num(verify.ipAddresses)} / ${num(verify.duplicates)}`],
        ['pool', verify.poolSummary],
        ['controller RSS idle -> peak (VmHWM)', `${mib(idle.currentKiB)} -> ${mib(memory.peakKiB)}`],
        ['controller CPU seconds', num(cpu, 1)],
        ['machine load average (1 min) after', num(loadavg()[0], 1)],
      ],
    );
    if (verify.problems.length > 0) console.log(`PROBLEMS:\n  ${verify.problems.slice(0, 10).join('\n  ')}`);
    return result;
  });
}

export async function runFill(options) {
  const count = options.claims ?? 1000;
  const seed = 20_000;
  // Room for both bursts and the seed, plus 10 %.
  const spec = { addresses: ['10.0.0.0/17'], prefix: 17, gateway: '10.0.0.1' };
  section(`fill: a ${num(count)}-claim burst on an empty pool, then on the same pool holding ${num(seed + count)} allocations`);
  return withOurCluster('fill', {}, async ({ cluster, namespace, controller }) => {
    await createPool({ api: cluster.api, namespace, target: ours, name: 'bench', spec, controller });
    // CPU seconds per claim do not depend on how much of the machine others take, as rates do.
    const snapshot = async () => ({
      at: Date.now(),
      load: loadavg()[0],
      requests: await requestCounts(cluster.api),
      cpu: {
        controller: cpuSeconds(controller.pid),
        'kube-apiserver': cpuSeconds(cluster.pids['kube-apiserver']),
        etcd: cpuSeconds(cluster.pids.etcd),
      },
    });
    const burstOf = (prefix, n) =>
      runBurst({
        api: cluster.api,
        namespace,
        target: ours,
        pool: 'bench',
        count: n,
        inflight: options.inflight,
        timeoutMs: options.timeoutMs(n),
        controller,
        ratePerSecond: undefined,
        snapshot,
        nameOf: (i) => `${prefix}-${i}`,
      });
    note(`burst on the empty pool: ${count} claims`);
    const empty = await burstOf('empty', count);
    note(`seeding: ${seed} claims bound by the controller (not timed)`);
    const seeded = await burstOf('seed', seed);
    note(`burst on the pool holding ${seed + count} allocations: ${count} claims`);
    const full = await burstOf('full', count);
    const verify = await verifyBurst({ api: cluster.api, namespace, target: ours, pool: 'bench', spec });
    controller.assertAlive();
    const emptyRate = rate(empty.bound, empty.fromFirstCreateSeconds);
    const fullRate = rate(full.bound, full.fromFirstCreateSeconds);
    const cpuPerClaim = (b) =>
      Object.fromEntries(
        Object.keys(b.snapshots.after.cpu).map((k) => [k, (b.snapshots.after.cpu[k] - b.snapshots.before.cpu[k]) / b.bound]),
      );
    const emptyCpu = cpuPerClaim(empty);
    const fullCpu = cpuPerClaim(full);
    const cpuRows = Object.entries(emptyCpu).map(([k, e]) => {
      const f = fullCpu[k] ?? NaN;
      return [`CPU per claim: ${k}, empty -> holding`, `${num(1000 * e, 1)} ms -> ${num(1000 * f, 1)} ms (${num(f / e, 2)}x)`];
    });
    const loadOf = (b) => `${num(b.snapshots.before.load, 1)} -> ${num(b.snapshots.after.load, 1)}`;
    // Which API requests a claim cost in each burst (the bench's own creates left out): a request
    // whose count grows with the fill (a list, a bigger write) shows here.
    const requestsOf = (b) =>
      new Map(
        requestDelta(b.snapshots.before.requests, b.snapshots.after.requests, new Map([[`POST ${ours.claim.plural} 201`, b.bound]])).map(
          (r) => [r.key, r],
        ),
      );
    const emptyRequests = requestsOf(empty);
    const fullRequests = requestsOf(full);
    const requestRows = [...new Set([...emptyRequests.keys(), ...fullRequests.keys()])].map((key) => {
      const e = emptyRequests.get(key);
      const f = fullRequests.get(key);
      const perClaim = (r, b) => (r === undefined ? '-' : `${num(r.count / b.bound, 2)} (${num(r.meanMs, 1)} ms)`);
      return [`API requests per claim: ${key}, empty -> holding (mean server time)`, `${perClaim(e, empty)} -> ${perClaim(f, full)}`];
    });
    const result = {
      command: controller.command,
      empty,
      seeded,
      full,
      verify,
      ratio: fullRate / emptyRate,
      emptyRate,
      fullRate,
      emptyCpu,
      fullCpu,
    };
    console.log(`$ ${controller.command}`);
    printTable(
      ['figure', 'value'],
      [
        [`${num(count)}-claim burst on the empty pool`, `${num(emptyRate)} claims/s (${num(empty.bound)} bound)`],
        [`seed: ${num(seed)} claims`, `${sec(seeded.fromFirstCreateSeconds)} (${num(seeded.bound)} bound)`],
        [`${num(count)}-claim burst on the pool holding ${num(seed + count)}`, `${num(fullRate)} claims/s (${num(full.bound)} bound)`],
        ['ratio (holding / empty)', num(result.ratio, 2)],
        ...cpuRows,
        ...requestRows,
        ['machine load average (1 min) in the bursts, empty / holding', `${loadOf(empty)} / ${loadOf(full)} on 2 CPUs`],
        ['IPAddresses / duplicates', `${num(verify.ipAddresses)} / ${num(verify.duplicates)}`],
        ['pool', verify.poolSummary],
        ['controller peak RSS (VmHWM)', mib(controller.memory().peakKiB)],
      ],
    );
    if (verify.problems.length > 0) console.log(`PROBLEMS:\n  ${verify.problems.slice(0, 10).join('\n  ')}`);
    return result;
  });
}
