// (d) The reference comparison: for each burst size (default 1,000 and 10,000 claims), metal-l2 and
// each release of the in-cluster provider (references.js: v1.1.0, the newest, and v1.0.3) under
// the same burst, each on its own fresh control plane, side by side. The reference binds about 10
// claims a second whatever the machine (it waits on its cache), so 10,000 claims would take it
// over 15 minutes a release: --reference-seconds bounds each reference run, and the table says how
// many claims it bound in that time and that its figures are those of these claims.
import { buildReference, startReferenceController } from './controllers.js';
import { burstOnFreshCluster, printBurst, requestsPerClaim, runOurBurst } from './ipam.js';
import { REFERENCES } from './references.js';
import { mib, ms, num, printTable, rate, sec, section } from './table.js';

/** The release the DESIGN §5 ratio is taken against: the newest. */
const NEWEST = REFERENCES[0]?.version;

const note = (text) => process.stderr.write(`  ${text}\n`);

/** Claims per second from the first create, and after the last create. */
const ratesOf = (r) => ({
  fromFirst: rate(r.burst.bound, r.burst.fromFirstCreateSeconds),
  fromLast: rate(r.burst.bound, r.burst.afterLastCreateSeconds),
});

/** metal-l2's claims/s over a reference's, from the first create (the DESIGN §5 ratio, target >= 5x). */
export function claimsPerSecondRatio(ourResult, refResult) {
  return ratesOf(ourResult).fromFirst / ratesOf(refResult).fromFirst;
}

/** One reference release under a burst of `count`; { reference, result } or { reference, unavailable }. */
async function runOneReference({ reference, count, stopAfterMs, options, builds }) {
  if (!builds.has(reference.version)) {
    note(`building or finding ${reference.version}: REFERENCE_IPAM_VERSION=${reference.version} bash hack/build-reference-ipam.sh`);
    builds.set(reference.version, await buildReference(reference.version));
  }
  const built = builds.get(reference.version);
  const unavailable = (reason) => {
    console.log(`in-cluster ${reference.version} did not run: ${reason}`);
    return { reference, unavailable: reason };
  };
  if (built.error !== undefined) return unavailable(built.error);
  let crds;
  try {
    crds = await reference.crds();
  } catch (err) {
    return unavailable(`its CRDs could not be found: ${err instanceof Error ? err.message : String(err)}`);
  }
  section(`reference: ${num(count)} claims at once on sigs.k8s.io/cluster-api-ipam-provider-in-cluster ${reference.version}`);
  let result;
  try {
    result = await burstOnFreshCluster({
      label: `reference-${reference.version}`,
      crds: crds.sources,
      target: reference.target,
      start: ({ kubeconfig, namespace }) => startReferenceController({ binary: built.binary, reference, kubeconfig, namespace }),
      count,
      stopAfterMs,
      options,
    });
  } catch (err) {
    return unavailable(`it ran but the burst failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  printBurst(result, [['CRDs', crds.origin]]);
  return { reference, result };
}

/** The claims a run bound, and when a bound run stopped, in how long. */
function measured(r) {
  const b = r.burst;
  if (b.stoppedEarly) return `first ${num(b.bound)} of ${num(b.count)} (stopped at ${sec(b.stopAfterMs / 1000)})`;
  return `${num(b.bound)} of ${num(b.count)}${b.timedOut ? ' (timed out)' : ''}`;
}

function printSideBySide(count, ourResult, refs) {
  const runs = [ourResult, ...refs.map((r) => r.result)];
  const cells = (fn) => runs.map((r) => (r === undefined ? 'did not run' : fn(r)));
  const pair = (a, b) => `${ms(a)} / ${ms(b)}`;
  const x = (value) => (Number.isFinite(value) ? `${num(value, 1)}x` : 'n/a');
  section(`reference: ${num(count)} claims at once, side by side (each on its own fresh control plane)`);
  printTable(
    ['figure', ourResult.label, ...refs.map((r) => r.reference.target.label), 'target'],
    [
      ['claims measured', ...cells(measured), ''],
      ['claims/s, from first create', ...cells((r) => num(ratesOf(r).fromFirst, 1)), ''],
      ['claims/s, from last create', ...cells((r) => num(ratesOf(r).fromLast, 1)), ''],
      [
        'p50 / p99 claim-to-bound (creationTimestamp)',
        ...cells((r) => pair(r.burst.latencyMs.creationTimestamp.p50, r.burst.latencyMs.creationTimestamp.p99)),
        '',
      ],
      [
        'p50 / p99 claim-to-bound (create request sent)',
        ...cells((r) => pair(r.burst.latencyMs.request.p50, r.burst.latencyMs.request.p99)),
        '',
      ],
      ['API requests per claim bound (claim creates left out)', ...cells((r) => num(requestsPerClaim(r), 1)), ''],
      ['controller peak RSS (VmHWM)', ...cells((r) => mib(r.memory.peakKiB)), ''],
      ...refs
        .filter((r) => r.result !== undefined)
        .map((r) => [
          `metal-l2 / ${r.reference.target.label} claims/s (from first create)`,
          x(claimsPerSecondRatio(ourResult, r.result)),
          ...refs.map(() => ''),
          r.reference.version === NEWEST ? '>= 5x' : '',
        ]),
    ],
  );
  if (refs.some((r) => r.result?.burst.stoppedEarly)) {
    console.log(
      'a reference stopped early was measured on the claims it bound by then (--reference-seconds): its latencies are those of the first claims and read low, the others still waited',
    );
  }
  console.log("API requests by verb and resource (apiserver_request_total) are in each run's table above");
}

/**
 * For each size: metal-l2's burst (taken from `earlier`, e.g. the burst or memory part of this
 * run, when one had that size), then each reference release under the same burst, then the table.
 * Returns { stopAfterMs, sizes: [{ count, ours, refs: [{ reference, result } | { reference, unavailable }] }] }.
 */
export async function runReference(options, earlier = []) {
  const sizes = options.claims === undefined ? options.referenceClaims : [options.claims];
  const stopAfterMs = options.referenceSeconds * 1000;
  const builds = new Map();
  const out = [];
  for (const count of sizes) {
    const ourResult =
      earlier.find((r) => r?.burst?.count === count && r.burst.ratePerSecond === undefined) ?? (await runOurBurst(options, count));
    const refs = [];
    for (const reference of REFERENCES.filter((r) => options.references?.includes(r.version) ?? true))
      refs.push(await runOneReference({ reference, count, stopAfterMs, options, builds }));
    printSideBySide(count, ourResult, refs);
    out.push({ count, ours: ourResult, refs });
  }
  return { stopAfterMs, sizes: out };
}

/** Rows of the bench's summary for the reference part. */
export function referenceSummaryRows(reference) {
  const rows = [];
  for (const { count, ours, refs } of reference.sizes) {
    const b = ours.burst;
    rows.push([
      `${num(count)} claims: metal-l2 claims/s / p50 / p99 / requests per claim / peak RSS`,
      `${num(ratesOf(ours).fromFirst, 1)} / ${ms(b.latencyMs.creationTimestamp.p50)} / ${ms(b.latencyMs.creationTimestamp.p99)} / ${num(requestsPerClaim(ours), 1)} / ${mib(ours.memory.peakKiB)}`,
      '',
      `${measured(ours)}; ${ours.command}`,
    ]);
    for (const { reference: ref, result, unavailable } of refs) {
      if (result === undefined) {
        rows.push([`${num(count)} claims: in-cluster ${ref.version}`, 'did not run', '', unavailable.split('\n')[0]]);
        continue;
      }
      const b = result.burst;
      rows.push([
        `${num(count)} claims: in-cluster ${ref.version} claims/s / p50 / p99 / requests per claim / peak RSS`,
        `${num(ratesOf(result).fromFirst, 1)} / ${ms(b.latencyMs.creationTimestamp.p50)} / ${ms(b.latencyMs.creationTimestamp.p99)} / ${num(requestsPerClaim(result), 1)} / ${mib(result.memory.peakKiB)}`,
        '',
        `${measured(result)}; ${result.command}`,
      ]);
      rows.push([
        `${num(count)} claims: metal-l2 / in-cluster ${ref.version} claims/s`,
        `${num(claimsPerSecondRatio(ours, result), 1)}x`,
        ref.version === NEWEST ? '>= 5x' : '',
        '',
      ]);
    }
  }
  return rows;
}
