// `npm run bench` (builds, then runs this): the benchmarks behind DESIGN §5's targets. It prints
// figures with the commands that produced them and asserts nothing against the targets; it exits
// non-zero only when a benchmark could not run or found a wrong result (a duplicate address).
//
//   core       the allocation core: packages/ipam-core/bench/allocator.bench.js, next free address
//              in a /16 with 60,000 used (µs/op; target < 50 µs), plus batch and codec figures.
//   burst      IPAM throughput: a fresh local control plane (@metal-l2/local-control-plane) with
//              the CAPI v1.14 IPAM CRDs and ours, our controller as a child process
//              (node packages/ipam-controller/dist/main.js), one pool, 1,000 IPAddressClaims created
//              at once (50 creates in flight). A watch on the claims times each one: claims/s until
//              all are bound counted from the first create and from the last create, p50/p99
//              claim-to-bound latency (from creationTimestamp, and from the client's create
//              request), then zero duplicates (IPAddresses, the pool's allocations map).
//   floor      the write floor: a fresh local control plane and no controller, as many plain writes
//              as the burst has claims (ConfigMap creates from the bench's bare client, the same
//              number in flight): writes/s and p50/p99 per write. With burst in the same run, the
//              burst's claims/s as a fraction of it, and the share of it the burst used counting
//              every write a claim took (the bench's create and the controller's writes).
//   steady     normal use: claims arriving at a steady 20/s for 60 s (--rate, --duration), each
//              create sent on schedule whatever became of the earlier ones, on a fresh control
//              plane as in burst: p50/p99 claim-to-bound (target p99 < 500 ms).
//   memory     the same with 10,000 claims on one pool: the controller's peak RSS (VmHWM of the
//              child process; target < 256 MiB), and its RSS idle before the first claim (the
//              pool reconciled, caches synced; target < 80 MiB).
//   capacity   issue 21: a /16 pool without a gateway (65,534 addresses) filled with as many claims
//              whose names are 253 characters (--claims N: the smallest pool they fill, e.g. 16,382
//              for a /18), controller heap not limited to the pod's: claims bound, time, peak RSS,
//              the pool's blocks. Long (tens of minutes): not run by default.
//   fill       issue 21: the 1,000-claim burst (--claims) on an empty pool, then 20,000 more claims
//              bound by the controller (the seed, not timed), then the same burst again on the pool
//              now holding 21,000 allocations: both claims/s and their ratio (target >= 0.9).
//   reference  the reference in-cluster provider, v1.1.0 (the newest: CAPI v1beta2 IPAM contract,
//              its CRDs and the CAPI v1.11 ones read from the Go module cache) and v1.0.3 (CAPI
//              v1.10.10 CRDs from ../shared), each built by hack/build-reference-ipam.sh from the
//              Go module proxy into a cache: for 1,000 and 10,000 claims (--reference-claims, or
//              the one --claims), our burst and each release's on its own fresh control plane,
//              side by side: claims/s, p50/p99, API requests per claim, controller peak RSS, and
//              ours / v1.1.0 claims/s (target >= 5x). Our burst of that size is taken from the
//              burst or memory part of the same run when there is one. Each reference run stops
//              --reference-seconds after its first create (it binds ~10 claims/s) and says what
//              it measured. If a release cannot be built or run, says why and goes on.
//   network    the network controller (issue 8): a fresh local control plane with the CAPI v1.14
//              CRDs, CAPP's (../shared/upstream-crds/cluster-api-provider-packet) and ours; the
//              Metal simulator (its default delays) and the CAPP fixture (device poll 1 s) in this
//              process; both controllers as child processes (node packages/ipam-controller/dist/
//              main.js, node packages/network-controller/dist/main.js --webhook-port 0). No webhook
//              runs, so each PacketMachine is created already carrying what ours adds (the CAPI
//              pause and our hold marker). N hybrid-bonded machines (bond0 + VLAN 1000 with one
//              address from an InClusterIPPool: PacketMachine, bootstrap Secret, Machine) created at
//              once (--inflight at a time); a watch on the MachineNetworks times each one: time to
//              all Ready from the first create, p50/p99 create-to-Ready and device-active-to-Ready
//              (the device's active from the simulator's store); the Metal calls of the network
//              controller per machine by operation and the most any one device cost (from the
//              simulator's request log, by User-Agent), the CAPP fixture's separately; both
//              controllers' peak RSS (target < 256 MiB; each runs with its chart's V8 heap budget,
//              --max-old-space-size=192 and 288); then the network controller is restarted
//              and, once its log shows every machine reconciled, the Metal calls of that
//              steady-state resync (target 0; <= 3 per machine in the rollout: one read, one VLAN
//              batch, one poll); then restarted again with a short drift period (N/5 s, at least
//              10 s) and, after 1.1 periods of warm-up, the Metal calls of one period (target one
//              read per machine, no write). Fails on a duplicate address.
//
// The run ends with issue 32's targets, each met / not met from this run's figures, or not measured
// and the --only that measures it (hack/bench/verdicts.js). One at a time, e.g.:
//   node hack/bench.js --only reference --references v1.1.0 --reference-claims 1000
//   node hack/bench.js --only burst,floor        node hack/bench.js --only fill
//   node hack/bench.js --only capacity           (a /16 of 253-character names: long)
//
// Each cluster part also prints what explains its figures: the controller's API requests by verb
// (from the API server's apiserver_request_total, the bench's own creates left out) with their
// mean server time, CPU seconds of controller / kube-apiserver / etcd / bench during the burst,
// claim watches the API server force-closed as too slow (its log), claims bound per second, and
// the machine's load average. Controller and control-plane logs stay in $TMPDIR/metal-l2-bench-logs.
// METAL_L2_BENCH_CONTROLLER_NODE_ARGS passes node flags to our controller (e.g. "--cpu-prof").
//
// Options: --only core|burst|floor|steady|memory|capacity|fill|reference|network (comma-separated;
//                 default all but capacity)
//          --claims N     claims per burst (default 1,000; the memory bench 10,000)
//          --machines N   machines in the network bench (default 100)
//          --sim-rate-limit R[:B]  the network bench's simulator refuses the network controller's
//                         API token beyond R requests per second (burst B, default R) with 429
//                         + Retry-After (default off: Metal publishes no figures); CAPP has a
//                         token of its own, not limited (CAPP v0.9.0 fails a machine whose
//                         createDevice is refused); prints each party's 429s
//          --reference-claims N,N  burst sizes of the reference part (default 1000,10000)
//          --reference-seconds S   each reference run measures the claims bound within S s of
//                         its first create (default 300)
//          --references V,V  the reference releases to run (default all: v1.1.0,v1.0.3); the
//                         targets compare against v1.1.0
//          --capacity-heap-mib M  the capacity part's --max-old-space-size (default the chart's, 192)
//          --inflight N   claim (or machine, or floor write) creates in flight (default 50)
//          --rate N       claims per second in the steady part (default 20)
//          --duration S   seconds of steady arrivals (default 60)
//          --timeout S    seconds to wait for all claims bound (default 120 + 0.2 s per claim) or
//                         all MachineNetworks Ready (default 300 + 3 s per machine)
// The machine is small (2 cores shared with the control plane): run the heavy parts sparingly.
import { cpus, loadavg } from 'node:os';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { runCapacity, runFill } from './bench/capacity.js';
import { stopAllClusters } from './bench/cluster.js';
import { stopAllControllers } from './bench/controllers.js';
import { runCore } from './bench/core.js';
import { floorComparison, perClaimRows, runFloor } from './bench/floor.js';
import { runMemory, runOurBurst, runSteady } from './bench/ipam.js';
import { parseRateLimit } from '@metal-l2/metal-sim';
import { rateLimitText, runNetwork } from './bench/network.js';
import { referenceSummaryRows, runReference } from './bench/reference.js';
import { REFERENCES } from './bench/references.js';
import { printVerdicts } from './bench/verdicts.js';
import { mib, ms, num, printTable, rate, sec, section } from './bench/table.js';

const PARTS = ['core', 'burst', 'floor', 'steady', 'memory', 'capacity', 'fill', 'reference', 'network'];
/** Parts too long to run unless asked for by name. */
const ON_REQUEST = new Set(['capacity']);

function parseOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      only: { type: 'string' },
      claims: { type: 'string' },
      machines: { type: 'string', default: '100' },
      'sim-rate-limit': { type: 'string' },
      'reference-claims': { type: 'string', default: '1000,10000' },
      'reference-seconds': { type: 'string', default: '300' },
      references: { type: 'string' },
      'capacity-heap-mib': { type: 'string' },
      inflight: { type: 'string', default: '50' },
      rate: { type: 'string', default: '20' },
      duration: { type: 'string', default: '60' },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const positive = (value, flag) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} takes a positive integer, not ${JSON.stringify(value)}`);
    return n;
  };
  const only = values.only === undefined ? PARTS.filter((p) => !ON_REQUEST.has(p)) : values.only.split(',').map((s) => s.trim());
  for (const part of only) if (!PARTS.includes(part)) throw new Error(`--only takes ${PARTS.join('|')}, not ${JSON.stringify(part)}`);
  const timeout = values.timeout === undefined ? undefined : positive(values.timeout, 'timeout');
  return {
    help: values.help === true,
    only: new Set(only),
    claims: values.claims === undefined ? undefined : positive(values.claims, 'claims'),
    machines: positive(values.machines, 'machines'),
    simRateLimit: values['sim-rate-limit'] === undefined ? undefined : simRateLimit(values['sim-rate-limit']),
    referenceClaims: values['reference-claims'].split(',').map((s) => positive(s.trim(), 'reference-claims')),
    referenceSeconds: positive(values['reference-seconds'], 'reference-seconds'),
    references: values.references === undefined ? undefined : referenceVersions(values.references),
    capacityHeapMiB: values['capacity-heap-mib'] === undefined ? undefined : positive(values['capacity-heap-mib'], 'capacity-heap-mib'),
    inflight: positive(values.inflight, 'inflight'),
    rate: positive(values.rate, 'rate'),
    duration: positive(values.duration, 'duration'),
    timeoutSeconds: timeout,
    timeoutMs: (count) => (timeout ?? 120 + 0.2 * count) * 1000,
  };
}

/** --references v1.1.0[,v1.0.3]: which releases of the reference provider run (default all). */
function referenceVersions(text) {
  const known = REFERENCES.map((r) => r.version);
  const versions = text.split(',').map((v) => v.trim());
  for (const v of versions) if (!known.includes(v)) throw new Error(`--references takes ${known.join(',')}, not ${JSON.stringify(v)}`);
  return versions;
}

function simRateLimit(text) {
  try {
    return parseRateLimit(text);
  } catch (err) {
    throw new Error(`--sim-rate-limit: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The burst's API requests and watch events per claim beside the claim-write floor's. */
function printPerClaim(burst, floor) {
  section('per claim: API requests by verb and resource, and watch events, burst vs claim-write floor');
  console.log(
    '(apiserver_request_total and apiserver_watch_events_total/_sizes of the IPAM and CAPI groups; codes other than 2xx in brackets)',
  );
  printTable(['per claim', `burst (${num(burst.burst.bound)} bound)`, `floor (${num(floor.claims.count)})`], perClaimRows(burst, floor));
}

function printSummary(results, errors) {
  section('summary');
  const rows = [];
  const { core, burst, floor, steady, memory, capacity, fill, reference, network } = results;
  if (core) {
    rows.push(['next free address, /16 with 60,000 used (worst case)', `${num(core.nextFreeUs, 2)} µs`, '< 50 µs', core.command]);
    rows.push(['  building that allocation state from 60,000 used (worst case)', `${num(core.buildUs / 1000, 1)} ms`, '', '']);
  }
  if (burst) {
    const b = burst.burst;
    rows.push([`${num(b.count)}-claim burst: claims/s from first create`, num(rate(b.bound, b.fromFirstCreateSeconds)), '', burst.command]);
    rows.push([`${num(b.count)}-claim burst: claims/s from last create`, num(rate(b.bound, b.afterLastCreateSeconds)), '', '']);
    rows.push([
      `${num(b.count)}-claim burst: p50 / p99 claim-to-bound`,
      `${ms(b.latencyMs.creationTimestamp.p50)} / ${ms(b.latencyMs.creationTimestamp.p99)}`,
      'p99 < 2 s',
      '',
    ]);
    rows.push([
      `${num(b.count)}-claim burst: duplicates`,
      `${num(burst.verify.duplicates)}${burst.verify.problems.length > 0 ? ' (PROBLEMS)' : ''}`,
      '0',
      '',
    ]);
  }
  if (floor) {
    rows.push([
      `write floor: ${num(floor.count)} plain writes (ConfigMap creates), no controller`,
      `${num(floor.writesPerSecond)} writes/s`,
      '',
      floor.command,
    ]);
    if (burst) {
      const f = floorComparison(burst, floor);
      rows.push([
        `claim-write floor: ${num(floor.claims.count)} claims, their 4 writes from a bare client, no controller`,
        `${num(f.floorClaimsPerSecond)} claims/s`,
        '',
        floor.claims.command,
      ]);
      rows.push([
        'burst claims/s as a fraction of the claim-write floor',
        num(f.claimFraction, 2),
        '>= 0.9',
        `${num(f.claimsPerSecond)} / ${num(f.floorClaimsPerSecond)}`,
      ]);
      rows.push([
        'burst claims/s as a fraction of the floor writes/s',
        num(f.fraction, 2),
        '',
        `${num(f.claimsPerSecond)} / ${num(f.floorWritesPerSecond)}`,
      ]);
      rows.push([
        `  counting every write of a claim (${num(f.writesPerClaim, 1)} per claim)`,
        `${num(100 * f.writeShare)}% of the floor`,
        '',
        '',
      ]);
    }
  }
  if (steady) {
    const b = steady.burst;
    rows.push([
      `${num(b.ratePerSecond)} claims/s for ${num(b.count / b.ratePerSecond)} s: p50 / p99 claim-to-bound`,
      `${ms(b.latencyMs.request.p50)} / ${ms(b.latencyMs.request.p99)}`,
      'p99 < 500 ms',
      steady.command,
    ]);
    rows.push([`  bound / duplicates`, `${num(b.bound)} of ${num(b.count)} / ${num(steady.verify.duplicates)}`, '', '']);
  }
  if (memory) {
    rows.push([
      `${num(memory.burst.count)} claims: controller RSS idle before the first claim`,
      mib(memory.idle.currentKiB),
      '< 80 MiB',
      memory.command,
    ]);
    rows.push([`${num(memory.burst.count)} claims bound: controller peak RSS`, mib(memory.memory.peakKiB), '< 256 MiB', '']);
    rows.push([
      `${num(memory.burst.count)} claims: claims/s / p99 / duplicates`,
      `${num(rate(memory.burst.bound, memory.burst.fromFirstCreateSeconds))} / ${ms(memory.burst.latencyMs.creationTimestamp.p99)} / ${num(memory.verify.duplicates)}`,
      '',
      '',
    ]);
  }
  if (reference) rows.push(...referenceSummaryRows(reference));
  if (capacity) {
    const b = capacity.burst;
    rows.push([
      `/${capacity.spec.prefix} pool, ${num(b.count)} claims with 253-character names: bound`,
      `${num(b.bound)} of ${num(b.count)}`,
      'all',
      capacity.command,
    ]);
    rows.push([
      `  time from first create / claims/s`,
      `${sec(b.fromFirstCreateSeconds)} / ${num(rate(b.bound, b.fromFirstCreateSeconds))}`,
      '',
      '',
    ]);
    rows.push([
      `  controller peak RSS / duplicates`,
      `${mib(capacity.memory.peakKiB)} / ${num(capacity.verify.duplicates)}`,
      '',
      '0 duplicates',
    ]);
  }
  if (fill) {
    rows.push([
      `${num(fill.empty.count)}-claim burst on a pool holding ${num(fill.seeded.count + fill.empty.count)} / on an empty pool`,
      num(fill.ratio, 2),
      '>= 0.9',
      `${num(fill.fullRate)} / ${num(fill.emptyRate)} claims/s; ${fill.command}`,
    ]);
    for (const k of Object.keys(fill.emptyCpu ?? {})) {
      rows.push([
        `  CPU per claim, holding / empty: ${k}`,
        num(fill.fullCpu[k] / fill.emptyCpu[k], 2),
        '',
        `${num(1000 * fill.fullCpu[k], 1)} / ${num(1000 * fill.emptyCpu[k], 1)} ms`,
      ]);
    }
  }
  if (network) {
    const { rollout: n, calls, steady, verify, fromActive, memory, drift } = network;
    const ops = Object.entries(calls.controller)
      .sort((a, b) => b[1] - a[1])
      .map(([op, count]) => `${op} ${num(count / network.count, 2)}`)
      .join(', ');
    rows.push([
      `${num(n.count)} hybrid-bonded machines: all MachineNetworks Ready (from first create)`,
      `${sec(n.allReadySeconds)}${n.timedOut ? ` (${n.ready} Ready, timed out)` : ''}`,
      `all ${num(n.count)} Ready`,
      network.command,
    ]);
    rows.push([`${num(n.count)} machines: failed (CAPP gave the device up)`, num(n.failed.length), '0', n.failed[0] ?? '']);
    rows.push([`${num(n.count)} machines: p50 / p99 create-to-Ready`, `${ms(n.latencyMs.p50)} / ${ms(n.latencyMs.p99)}`, '', '']);
    rows.push([
      `${num(n.count)} machines: p50 / p99 device active -> Ready`,
      `${ms(fromActive.p50)} / ${ms(fromActive.p99)}`,
      '(none set)',
      'device active: the simulator store; Ready: a watch on the MachineNetworks',
    ]);
    rows.push([`${num(n.count)} machines: network controller Metal calls per machine`, num(calls.perMachine, 2), '<= 3', ops]);
    rows.push([`${num(n.count)} machines: most Metal calls on one device`, num(calls.worst.total), '', '']);
    rows.push([
      `${num(n.count)} machines: CAPP fixture Metal calls per machine`,
      num(calls.cappTotal / network.count, 2),
      '',
      'User-Agent cluster-api-provider-packet/v0.9.0 (metal-l2 capp-fixture)',
    ]);
    rows.push([`${num(n.count)} machines: network controller peak RSS (rollout)`, mib(memory.network.peakKiB), '< 256 MiB', 'VmHWM']);
    rows.push([`${num(n.count)} machines: IPAM controller peak RSS (rollout)`, mib(memory.ipam.peakKiB), '', 'VmHWM']);
    rows.push([`${num(n.count)} machines: Metal calls in a steady-state resync (restart)`, num(steady.calls), '0', '']);
    rows.push([
      `${num(n.count)} machines: drift check, Metal reads per machine in one ${num(drift.periodSeconds)} s period`,
      `${num(drift.readsPerMachine, 2)} (${num(drift.writes)} writes)`,
      '1 (0 writes)',
      drift.controller.command,
    ]);
    rows.push([`${num(n.count)} machines: duplicate addresses`, num(verify.duplicates), '0', '']);
    rows.push([
      `${num(n.count)} machines: 429s seen by the network controller / the CAPP fixture`,
      `${num(network.rateLimited.network)} / ${num(network.rateLimited.capp)}`,
      '',
      `simulated rate limit: ${rateLimitText(network.rateLimited.limit)}`,
    ]);
  }
  for (const [part, err] of errors) rows.push([`${part}: FAILED`, '', '', err.message.split('\n')[0]]);
  printTable(['figure', 'measured', 'target', 'command'], rows);
}

async function main() {
  const usage =
    'node hack/bench.js [--only core|burst|floor|steady|memory|capacity|fill|reference|network] [--claims N] [--reference-claims N,N] [--reference-seconds S] [--references v1.1.0,v1.0.3] [--capacity-heap-mib M] [--machines N] [--sim-rate-limit R[:B]] [--inflight N] [--rate N] [--duration S] [--timeout S]';
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    console.error(`${err instanceof Error ? err.message : String(err)}\nusage: ${usage}`);
    return 2;
  }
  if (options.help) {
    console.log(usage);
    return 0;
  }
  console.log(
    `metal-l2 benchmarks (node ${process.version}, ${new Date().toISOString()}, ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')})`,
  );
  const results = {};
  const errors = [];
  const attempt = async (part, fn) => {
    try {
      results[part] = await fn();
    } catch (err) {
      errors.push([part, err]);
      console.log(`${part} FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
  };
  if (options.only.has('core')) await attempt('core', () => runCore());
  if (options.only.has('burst')) await attempt('burst', () => runOurBurst(options));
  if (options.only.has('floor')) await attempt('floor', () => runFloor(options));
  if (results.burst !== undefined && results.floor !== undefined) printPerClaim(results.burst, results.floor);
  if (options.only.has('steady')) await attempt('steady', () => runSteady(options));
  if (options.only.has('memory')) await attempt('memory', () => runMemory(options));
  if (options.only.has('capacity')) await attempt('capacity', () => runCapacity(options));
  if (options.only.has('fill')) await attempt('fill', () => runFill(options));
  if (options.only.has('reference')) await attempt('reference', () => runReference(options, [results.burst, results.memory]));
  if (options.only.has('network')) await attempt('network', () => runNetwork(options));
  printSummary(results, errors);
  printVerdicts(results);
  const wrong =
    ['burst', 'steady', 'memory', 'capacity'].some((p) => results[p]?.verify?.problems?.length > 0 || results[p]?.burst?.timedOut) ||
    results.fill?.verify?.problems?.length > 0 ||
    [results.fill?.empty, results.fill?.seeded, results.fill?.full].some((b) => b?.timedOut === true) ||
    results.network?.verify?.duplicates > 0 ||
    results.network?.rollout?.timedOut === true ||
    results.network?.rollout?.failed?.length > 0;
  return errors.length > 0 || wrong ? 1 : 0;
}

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`\n${signal}: stopping the controllers and control planes this run started\n`);
    void stopAllControllers()
      .then(() => stopAllClusters())
      .finally(() => process.exit(130));
  });
}

process.exitCode = await main().catch((err) => {
  console.error(err.stack ?? err.message);
  return 2;
});
