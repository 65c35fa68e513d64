// Issue 32's targets, each with met / not met from this run's figures (or "not measured" and the
// part that measures it), so one run says where the controller stands against the newest peer.
import { floorComparison } from './floor.js';
import { claimsPerSecondRatio } from './reference.js';
import { mib, ms, num, printTable, section } from './table.js';

/** The release the targets compare against (references.js lists it first). */
const PEER = 'v1.1.0';

const verdict = (ok) => (ok === undefined ? 'not measured' : ok ? 'met' : 'NOT MET');

/** The reference part's run of `count` claims: ours and the peer's result, when both ran. */
function peerRun(reference, count) {
  const size = reference?.sizes.find((s) => s.count === count);
  const peer = size?.refs.find((r) => r.reference.version === PEER);
  return size === undefined || peer?.result === undefined ? undefined : { ours: size.ours, peer: peer.result };
}

/** A run bounded by --reference-seconds measured the peer on the claims it bound by then. */
const bounded = (r) => (r.burst.stoppedEarly ? ` (in-cluster stopped at ${num(r.burst.bound)} bound: --reference-seconds)` : '');

function peerRatioRow(reference, count) {
  const run = peerRun(reference, count);
  const target = `>= 5x in-cluster ${PEER}`;
  const figure = `metal-l2 / in-cluster ${PEER} claims/s, ${num(count)} claims at once`;
  if (run === undefined) return [figure, 'n/a', target, verdict(undefined), `--only reference --reference-claims ${count}`];
  const ratio = claimsPerSecondRatio(run.ours, run.peer);
  return [figure, `${num(ratio, 1)}x`, target, verdict(ratio >= 5), `side by side, each on a fresh control plane${bounded(run.peer)}`];
}

function peerMemoryRow(reference) {
  const run = peerRun(reference, 10_000);
  const figure = 'controller peak RSS, 10,000 claims at once';
  const target = `<= in-cluster ${PEER}'s`;
  if (run === undefined) return [figure, 'n/a', target, verdict(undefined), '--only reference --reference-claims 10000'];
  const ours = run.ours.memory.peakKiB;
  const peer = run.peer.memory.peakKiB;
  return [figure, `${mib(ours)} vs ${mib(peer)}`, target, verdict(ours <= peer), `VmHWM of each process${bounded(run.peer)}`];
}

function capacityRow(capacity) {
  const figure = '/16 of 253-character names: all bound, controller peak RSS';
  const target = 'all bound, < 256 MiB';
  if (capacity === undefined) return [figure, 'n/a', target, verdict(undefined), '--only capacity'];
  const b = capacity.burst;
  const peakMiB = capacity.memory.peakKiB / 1024;
  const all = b.bound === b.count && capacity.verify.problems.length === 0;
  return [
    figure,
    `${num(b.bound)} of ${num(b.count)}, ${mib(capacity.memory.peakKiB)}`,
    target,
    verdict(all && peakMiB < 256),
    `/${capacity.spec.prefix}, heap ${capacity.heapMiB} MiB (--max-old-space-size)`,
  ];
}

function fillRow(fill) {
  const figure = 'fill ratio: burst on a pool holding 21,000 / on an empty pool';
  if (fill === undefined) return [figure, 'n/a', '>= 0.9', verdict(undefined), '--only fill'];
  return [figure, num(fill.ratio, 2), '>= 0.9', verdict(fill.ratio >= 0.9), `${num(fill.fullRate)} / ${num(fill.emptyRate)} claims/s`];
}

function floorRows(burst, floor) {
  const figure = 'burst claims/s / claim-write floor claims/s';
  if (burst === undefined || floor === undefined) return [[figure, 'n/a', '>= 0.9', verdict(undefined), '--only burst,floor']];
  const f = floorComparison(burst, floor);
  const p99 = burst.burst.latencyMs.creationTimestamp.p99;
  return [
    [
      figure,
      num(f.claimFraction, 2),
      '>= 0.9',
      verdict(f.claimFraction >= 0.9),
      `${num(f.claimsPerSecond)} / ${num(f.floorClaimsPerSecond)}`,
    ],
    [
      `p99 claim-to-bound, ${num(burst.burst.count)} claims at once`,
      ms(p99),
      '< 2 s',
      verdict(p99 < 2000),
      'from creationTimestamp (1 s resolution)',
    ],
  ];
}

/** Prints the targets table; returns its rows (figure, measured, target, verdict, how). */
export function printVerdicts(results) {
  const { burst, floor, capacity, fill, reference } = results;
  const rows = [
    peerRatioRow(reference, 1000),
    peerRatioRow(reference, 10_000),
    peerMemoryRow(reference),
    capacityRow(capacity),
    fillRow(fill),
    ...floorRows(burst, floor),
  ];
  section('targets (issue 32): met / not met');
  printTable(['figure', 'measured', 'target', 'verdict', 'how'], rows);
  return rows;
}
