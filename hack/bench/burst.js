// The claim burst: N IPAddressClaims on one pool created at once (a bounded number of creates in
// flight), timed by a watch on the claims (never by polling), then checked for duplicates.
import { clearInterval, setInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { resourcePath } from './api.js';
import { waitUntil } from './cluster.js';

/** Nearest-rank percentile of numbers (sorted copy). */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/** The smallest IPv4 pool (at most /24) with room for n claims plus 10%, gateway, network and broadcast. */
export function poolFor(n) {
  const bits = Math.max(8, Math.ceil(Math.log2(Math.ceil(n * 1.1) + 3)));
  const prefix = 32 - bits;
  return { addresses: [`10.0.0.0/${prefix}`], prefix, gateway: '10.0.0.1' };
}

/**
 * Creates `count` claims named `${prefix}-${i}` with at most `inflight` creates at a time and
 * waits until the watch has seen status.addressRef on every one of them, or `timeoutMs` passed.
 * With `ratePerSecond`, creates are paced instead: claim i is sent at i / ratePerSecond seconds
 * after the first whatever became of the earlier ones (an open loop, as independent users would
 * arrive), and `inflight` is ignored.
 * `target` describes the kinds (see targets.js); `controller` is checked to be alive meanwhile;
 * `snapshot()` (optional) is taken right before the first create and right after the last bind.
 * `stopAfterMs` (optional) bounds a slow controller's run: once all claims are created, waiting
 * ends that long after the first create, and the figures are those of the claims bound by then
 * (`stoppedEarly` says so). It is not a timeout: the run is not a failure.
 * `nameOf(i)` names claim i (default `c-<i>`).
 */
export async function runBurst({
  api,
  namespace,
  target,
  pool,
  count,
  inflight,
  ratePerSecond,
  timeoutMs,
  stopAfterMs = Infinity,
  controller,
  snapshot,
  nameOf = (i) => `c-${i}`,
}) {
  const claimsPath = resourcePath({ ...target.claim, namespace });
  const claims = new Map();
  for (let i = 0; i < count; i++) claims.set(nameOf(i), { sentAt: NaN, createdAt: NaN, creationTimestamp: NaN, boundAt: NaN });
  let bound = 0;
  let resolveAll;
  const allBound = new Promise((resolve) => (resolveAll = resolve));
  const watch = api.watchList(claimsPath, (type, obj, seenAt) => {
    const entry = claims.get(obj?.metadata?.name);
    if (entry === undefined || type === 'DELETED') return;
    if (Number.isNaN(entry.creationTimestamp) && obj.metadata.creationTimestamp !== undefined) {
      entry.creationTimestamp = Date.parse(obj.metadata.creationTimestamp);
    }
    if (Number.isNaN(entry.boundAt) && obj.status?.addressRef?.name) {
      entry.boundAt = seenAt;
      bound++;
      if (bound === count) resolveAll();
    }
  });
  await watch.ready;

  const names = [...claims.keys()];
  let next = 0;
  const body = (name) => ({
    apiVersion: `${target.claim.group}/${target.claim.version}`,
    kind: 'IPAddressClaim',
    metadata: { name, namespace },
    spec: { poolRef: { apiGroup: target.pool.group, kind: target.pool.kind, name: pool } },
  });
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++];
      const entry = claims.get(name);
      entry.sentAt = Date.now();
      const created = await api.post(claimsPath, body(name));
      entry.createdAt = Date.now();
      if (Number.isNaN(entry.creationTimestamp)) entry.creationTimestamp = Date.parse(created.metadata.creationTimestamp);
    }
  };
  let paceLagMs = 0;
  // Paced: every create is its own request, sent on schedule (a late one is sent at once).
  const paced = async () => {
    const start = Date.now();
    const sends = [];
    for (let i = 0; i < names.length; i++) {
      const due = start + (i * 1000) / ratePerSecond;
      if (due > Date.now()) await sleep(due - Date.now());
      next = i + 1;
      const entry = claims.get(names[i]);
      entry.sentAt = Date.now();
      paceLagMs = Math.max(paceLagMs, entry.sentAt - due);
      sends.push(
        api.post(claimsPath, body(names[i])).then((created) => {
          entry.createdAt = Date.now();
          if (Number.isNaN(entry.creationTimestamp)) entry.creationTimestamp = Date.parse(created.metadata.creationTimestamp);
        }),
      );
    }
    await Promise.all(sends);
  };
  const progress = setInterval(() => {
    process.stderr.write(`  ... ${bound}/${count} bound, ${next}/${count} created\n`);
  }, 10_000);
  let timedOut = false;
  let stoppedEarly = false;
  const snapshots = {};
  let watchRestarts = 0;
  try {
    snapshots.before = await snapshot?.();
    if (ratePerSecond === undefined) await Promise.all(Array.from({ length: Math.min(inflight, count) }, worker));
    else await paced();
    const deadline = Date.now() + timeoutMs;
    const firstCreate = Math.min(...[...claims.values()].map((e) => e.sentAt));
    const stopAt = firstCreate + stopAfterMs;
    while (bound < count && !timedOut && !stoppedEarly) {
      controller.assertAlive();
      await Promise.race([allBound, sleep(Math.max(0, Math.min(1_000, stopAt - Date.now())))]);
      timedOut = Date.now() > deadline;
      stoppedEarly = bound < count && Date.now() >= stopAt;
    }
    snapshots.after = await snapshot?.();
  } finally {
    clearInterval(progress);
    watchRestarts = watch.restarts();
    await watch.stop();
  }

  const entries = [...claims.values()];
  const boundEntries = entries.filter((e) => !Number.isNaN(e.boundAt));
  const firstSent = Math.min(...entries.map((e) => e.sentAt));
  const lastCreated = Math.max(...entries.map((e) => e.createdAt));
  const lastBound = Math.max(...boundEntries.map((e) => e.boundAt));
  const fromCreation = boundEntries.map((e) => e.boundAt - e.creationTimestamp);
  const fromRequest = boundEntries.map((e) => e.boundAt - e.sentAt);
  // Claims bound in each second after the first create: shows stalls and the shape of the drain.
  const perSecond = [];
  for (const e of boundEntries) {
    const second = Math.floor((e.boundAt - firstSent) / 1000);
    perSecond[second] = (perSecond[second] ?? 0) + 1;
  }
  return {
    count,
    inflight,
    ratePerSecond,
    /** Paced: the latest any create was sent after its due time (the load generator keeping up). */
    paceLagMs,
    boundPerSecond: Array.from(perSecond, (v) => v ?? 0),
    bound: boundEntries.length,
    timedOut,
    stoppedEarly,
    stopAfterMs,
    snapshots,
    watchRestarts,
    createSeconds: (lastCreated - firstSent) / 1000,
    fromFirstCreateSeconds: (lastBound - firstSent) / 1000,
    afterLastCreateSeconds: (lastBound - lastCreated) / 1000,
    latencyMs: {
      creationTimestamp: { p50: percentile(fromCreation, 50), p99: percentile(fromCreation, 99), max: percentile(fromCreation, 100) },
      request: { p50: percentile(fromRequest, 50), p99: percentile(fromRequest, 99), max: percentile(fromRequest, 100) },
    },
  };
}

/**
 * After a burst: every claim's addressRef names an IPAddress of that claim, addresses are distinct
 * and never the gateway; target.checkPool adds what the pool's status says.
 */
export async function verifyBurst({ api, namespace, target, pool, spec }) {
  const claims = (await api.get(resourcePath({ ...target.claim, namespace }))).items;
  const addresses = (await api.get(resourcePath({ ...target.address, namespace }))).items;
  const byName = new Map(addresses.map((a) => [a.metadata.name, a]));
  const problems = [];
  let boundClaims = 0;
  for (const claim of claims) {
    const ref = claim.status?.addressRef?.name;
    if (!ref) continue;
    boundClaims++;
    const address = byName.get(ref);
    if (address === undefined) problems.push(`claim ${claim.metadata.name} names IPAddress ${ref}, which does not exist`);
    else if (address.spec.claimRef?.name !== claim.metadata.name)
      problems.push(`IPAddress ${ref} belongs to ${address.spec.claimRef?.name}, not ${claim.metadata.name}`);
  }
  const values = addresses.map((a) => a.spec.address);
  const distinct = new Set(values).size;
  if (distinct !== values.length) problems.push(`${values.length - distinct} duplicate addresses among ${values.length} IPAddresses`);
  if (values.includes(spec.gateway)) problems.push(`the gateway ${spec.gateway} was handed out`);
  const poolObj = await api.get(resourcePath({ ...target.pool, namespace, name: pool }));
  const poolCheck = await target.checkPool(poolObj, addresses, { api, namespace });
  problems.push(...poolCheck.problems);
  return {
    claims: claims.length,
    boundClaims,
    ipAddresses: addresses.length,
    distinctAddresses: distinct,
    duplicates: values.length - distinct,
    poolSummary: poolCheck.summary,
    problems,
  };
}

/** Creates the pool and waits until the controller has written its status (so it runs, caches synced). */
export async function createPool({ api, namespace, target, name, spec, controller }) {
  const path = resourcePath({ ...target.pool, namespace });
  await api.post(path, {
    apiVersion: `${target.pool.group}/${target.pool.version}`,
    kind: target.pool.kind,
    metadata: { name, namespace },
    spec,
  });
  await waitUntil(
    `the controller to write the status of ${target.pool.kind} ${name}`,
    async () => {
      controller.assertAlive();
      return target.poolReady(await api.get(`${path}/${name}`));
    },
    120_000,
  );
}
