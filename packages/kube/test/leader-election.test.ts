import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { builtinTypes, KubeClient, LeaderElector, realClock, silentLogger, type Clock, type Lease } from '../src/index.js';
import { startLeaseRefusal, type LeaseRefusal } from './lease-refusal.js';

/**
 * Short enough that takeovers happen within a test, with room for a loaded API server: a leader
 * has ten attempts to renew before its deadline, and gives up leading 5 s before others may take
 * its lease. The tests assert on what the Lease records (renewals, acquisitions, transitions),
 * with deadlines derived from these durations.
 */
const fast = { leaseDurationMs: 10_000, renewDeadlineMs: 5_000, retryPeriodMs: 500 } as const;

/** Wall time the test can step (NTP, an operator); the monotonic clock and the timers stay real. */
interface SteppedClock extends Clock {
  step(ms: number): void;
}

function steppedClock(): SteppedClock {
  let offsetMs = 0;
  return {
    now: () => realClock.now() + offsetMs,
    monotonic: () => realClock.monotonic(),
    schedule: (callback, delayMs) => realClock.schedule(callback, delayMs),
    step: (ms) => {
      offsetMs += ms;
    },
  };
}

const hourMs = 3_600_000;

interface Candidate {
  readonly elector: LeaderElector;
  readonly stop: AbortController;
  readonly run: Promise<void>;
  /** What the callbacks saw. */
  readonly seen: { leaderSignal: AbortSignal | undefined; started: number; stopped: number; otherLeaders: string[] };
}

describe('LeaderElector against the API server', () => {
  const kc = loadKubeConfig();
  const client = KubeClient.fromKubeConfig(kc);
  const logger = silentLogger();
  let ns = '';
  let refusal: LeaseRefusal | undefined;

  beforeAll(async () => {
    ns = await createTestNamespace(kc, 'kube-leader');
    refusal = await startLeaseRefusal(kc, ns);
  });
  afterAll(async () => {
    await refusal?.close();
    await deleteTestNamespace(kc, ns);
    client.close();
  });

  function candidate(options: { lease: string; identity: string; releaseOnCancel?: boolean; clock?: Clock }): Candidate {
    const elector = new LeaderElector({
      client,
      namespace: ns,
      name: options.lease,
      identity: options.identity,
      logger,
      ...fast,
      releaseOnCancel: options.releaseOnCancel ?? true,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
    const stop = new AbortController();
    const seen: Candidate['seen'] = { leaderSignal: undefined, started: 0, stopped: 0, otherLeaders: [] };
    const run = elector.run(stop.signal, {
      onStartedLeading: (signal) => {
        seen.leaderSignal = signal;
        seen.started += 1;
      },
      onStoppedLeading: () => {
        seen.stopped += 1;
      },
      onNewLeader: (identity) => {
        seen.otherLeaders.push(identity);
      },
    });
    return { elector, stop, run, seen };
  }

  async function readLease(lease: string): Promise<Lease | undefined> {
    return client.get<Lease>(builtinTypes.lease, { namespace: ns, name: lease });
  }

  async function holder(lease: string): Promise<string | undefined> {
    return (await readLease(lease))?.spec?.holderIdentity;
  }

  /** Waits until the Lease records `count` renewals by `identity` stamped at or after `fromMs` (wall time as written). */
  async function renewals(lease: string, identity: string, options: { fromMs: number; count: number }): Promise<Lease> {
    const seen = new Set<string>();
    return waitFor(
      `${options.count} renewals of ${lease} by ${identity}`,
      async () => {
        const current = await readLease(lease);
        const renewTime = current?.spec?.renewTime;
        if (current?.spec?.holderIdentity !== identity || renewTime === undefined || Date.parse(renewTime) < options.fromMs)
          return undefined;
        seen.add(renewTime);
        return seen.size >= options.count ? current : undefined;
      },
      { timeoutMs: options.count * fast.renewDeadlineMs, intervalMs: fast.retryPeriodMs / 5 },
    );
  }

  test('only one of two candidates leads; the other takes over as soon as the leader releases', async () => {
    const a = candidate({ lease: 'two', identity: 'a' });
    const b = candidate({ lease: 'two', identity: 'b' });
    await waitFor('a leader', () => a.elector.isLeader() || b.elector.isLeader(), { timeoutMs: timeouts.watchEvent });
    const [leader, standby] = a.elector.isLeader() ? [a, b] : [b, a];
    const leaderId = leader === a ? 'a' : 'b';
    // The standby tried and was turned away by the leader's lease, while the leader renewed it.
    await waitFor('the standby to see the leader', () => standby.seen.otherLeaders.includes(leaderId), {
      timeoutMs: timeouts.watchEvent + fast.leaseDurationMs,
    });
    const renewed = await renewals('two', leaderId, { fromMs: Date.now(), count: 2 });
    expect(standby.elector.isLeader()).toBe(false);
    expect(standby.seen.started).toBe(0);
    expect(leader.seen.stopped).toBe(0);

    leader.stop.abort();
    await leader.run;
    expect(leader.seen.leaderSignal?.aborted).toBe(true);
    expect(leader.seen.stopped).toBe(1);
    await waitFor('the standby to lead', () => standby.elector.isLeader(), { timeoutMs: timeouts.watchEvent + fast.leaseDurationMs });
    const lease = await readLease('two');
    // The holder changed (as client-go counts it: a release is no exception): one transition.
    expect(lease?.spec).toMatchObject({
      holderIdentity: standby === a ? 'a' : 'b',
      leaseDurationSeconds: fast.leaseDurationMs / 1000,
      leaseTransitions: 1,
    });
    expect(lease?.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // Released, not expired: the standby acquired the lease before the leader's last renewal
    // seen above (or a later one) would have expired.
    expect(Date.parse(lease?.spec?.acquireTime ?? '')).toBeLessThan(Date.parse(renewed.spec?.renewTime ?? '') + fast.leaseDurationMs);

    standby.stop.abort();
    await standby.run;
    const released = await readLease('two');
    expect(released?.spec).toMatchObject({ holderIdentity: '', leaseTransitions: 1 });

    // A released lease taken again, by the first holder: a second transition.
    const again = candidate({ lease: 'two', identity: leaderId });
    await waitFor(`${leaderId} to lead again`, () => again.elector.isLeader(), { timeoutMs: timeouts.watchEvent });
    expect((await readLease('two'))?.spec).toMatchObject({ holderIdentity: leaderId, leaseTransitions: 2 });
    again.stop.abort();
    await again.run;
    expect(await holder('two')).toBe('');
  });

  test('a leader that crashes without releasing is replaced after its lease expires', async () => {
    const a = candidate({ lease: 'crash', identity: 'a', releaseOnCancel: false });
    await waitFor('a to lead', () => a.elector.isLeader(), { timeoutMs: timeouts.watchEvent });
    const b = candidate({ lease: 'crash', identity: 'b' });
    // b tried and was turned away while a renewed.
    await waitFor('b to see a leading', () => b.seen.otherLeaders.includes('a'), { timeoutMs: timeouts.watchEvent });
    await renewals('crash', 'a', { fromMs: Date.now(), count: 2 });
    expect(b.elector.isLeader()).toBe(false);
    a.stop.abort();
    await a.run;
    const last = await readLease('crash');
    expect(last?.spec?.holderIdentity).toBe('a');
    await waitFor('b to take the expired lease', () => b.elector.isLeader(), { timeoutMs: timeouts.watchEvent + fast.leaseDurationMs });
    const lease = await readLease('crash');
    expect(lease?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    // Expired, not released: b took it no sooner than a lease duration after a's last renewal.
    expect(Date.parse(lease?.spec?.acquireTime ?? '')).toBeGreaterThanOrEqual(
      Date.parse(last?.spec?.renewTime ?? '') + fast.leaseDurationMs,
    );
    b.stop.abort();
    await b.run;
  });

  test('a leader whose lease is taken by someone else stops leading', async () => {
    const a = candidate({ lease: 'stolen', identity: 'a' });
    await waitFor('a to lead', () => a.elector.isLeader(), { timeoutMs: timeouts.watchEvent });
    // Another writer takes the lease over (an operator, a split brain): resourceVersion-guarded.
    await waitFor(
      'the lease to be taken over',
      async () => {
        const current = await client.get<Lease>(builtinTypes.lease, { namespace: ns, name: 'stolen' });
        if (current === undefined) return false;
        const now = new Date().toISOString().replace(/Z$/, '000Z');
        await client
          .replace(builtinTypes.lease, {
            ...current,
            spec: { ...current.spec, holderIdentity: 'intruder', renewTime: now, leaseDurationSeconds: 60 },
          })
          .catch(() => undefined);
        return (await holder('stolen')) === 'intruder';
      },
      { timeoutMs: timeouts.watchEvent },
    );
    await a.run;
    expect(a.elector.isLeader()).toBe(false);
    expect(a.seen.leaderSignal?.aborted).toBe(true);
    expect(a.seen.stopped).toBe(1);
    expect(a.stop.signal.aborted).toBe(false);
    expect(await holder('stolen')).toBe('intruder');
  });

  test('a wall clock stepped forward neither ends leadership nor stops renewals', async () => {
    const clock = steppedClock();
    const a = candidate({ lease: 'forward', identity: 'a', clock });
    await waitFor('a to lead', () => a.elector.isLeader(), { timeoutMs: timeouts.watchEvent });
    const steppedAt = clock.now() + hourMs;
    clock.step(hourMs);
    // Renewals go on after the step, stamped with the (stepped) wall time, as the Lease's readers
    // expect. A deadline measured on the wall clock would have passed at once, at the first of them.
    await renewals('forward', 'a', { fromMs: steppedAt, count: 3 });
    expect(a.elector.isLeader()).toBe(true);
    expect(a.seen.stopped).toBe(0);
    a.stop.abort();
    await a.run;
  });

  test('a wall clock stepped back does not keep a leader that cannot renew leading', async () => {
    const clock = steppedClock();
    const a = candidate({ lease: 'backward', identity: 'a', clock });
    await waitFor('a to lead', () => a.elector.isLeader(), { timeoutMs: timeouts.watchEvent });
    clock.step(-hourMs);
    refusal?.refuse('backward');
    // The last renewal that got through, in real wall time (it may carry the stepped-back time).
    const renewTime = Date.parse((await readLease('backward'))?.spec?.renewTime ?? '');
    const lastRenewal = renewTime < Date.now() - hourMs / 2 ? renewTime + hourMs : renewTime;
    // Others may take the lease leaseDuration after its last renewal: a must be gone before that.
    await waitFor('a to give up leading', () => !a.elector.isLeader(), { timeoutMs: fast.leaseDurationMs, intervalMs: 20 });
    expect(Date.now()).toBeLessThan(lastRenewal + fast.leaseDurationMs);
    await a.run;
    expect(a.seen.leaderSignal?.aborted).toBe(true);
    expect(a.seen.stopped).toBe(1);
    expect(a.stop.signal.aborted).toBe(false);
  });
});
