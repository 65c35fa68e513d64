import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
import { builtinTypes, KubeClient, LeaderElector, realClock, silentLogger, type Clock, type Lease } from '../src/index.js';
import { startLeaseRefusal, type LeaseRefusal } from './lease-refusal.js';

/** Short durations so takeovers happen within a test; the ratios are client-go's. */
const fast = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 250 } as const;

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
  readonly seen: { leaderSignal: AbortSignal | undefined; started: number; stopped: number };
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
    const seen: Candidate['seen'] = { leaderSignal: undefined, started: 0, stopped: 0 };
    const run = elector.run(stop.signal, {
      onStartedLeading: (signal) => {
        seen.leaderSignal = signal;
        seen.started += 1;
      },
      onStoppedLeading: () => {
        seen.stopped += 1;
      },
    });
    return { elector, stop, run, seen };
  }

  async function holder(lease: string): Promise<string | undefined> {
    const current = await client.get<Lease>(builtinTypes.lease, { namespace: ns, name: lease });
    return current?.spec?.holderIdentity;
  }

  test('only one of two candidates leads; the other takes over as soon as the leader releases', async () => {
    const a = candidate({ lease: 'two', identity: 'a' });
    const b = candidate({ lease: 'two', identity: 'b' });
    await waitFor('a leader', () => a.elector.isLeader() || b.elector.isLeader(), { timeoutMs: timeouts.watchEvent });
    await staysTrue('never two leaders', () => !(a.elector.isLeader() && b.elector.isLeader()), 1500);
    const [leader, standby] = a.elector.isLeader() ? [a, b] : [b, a];
    expect(await holder('two')).toBe(leader === a ? 'a' : 'b');
    expect(standby.seen.started).toBe(0);

    leader.stop.abort();
    await leader.run;
    expect(leader.seen.leaderSignal?.aborted).toBe(true);
    expect(leader.seen.stopped).toBe(1);
    const releasedAt = Date.now();
    await waitFor('the standby to lead', () => standby.elector.isLeader(), { timeoutMs: timeouts.watchEvent });
    // Released, not expired: the standby did not have to wait out the lease.
    expect(Date.now() - releasedAt).toBeLessThan(fast.leaseDurationMs);
    const lease = await client.get<Lease>(builtinTypes.lease, { namespace: ns, name: 'two' });
    expect(lease?.spec).toMatchObject({ holderIdentity: standby === a ? 'a' : 'b', leaseDurationSeconds: 3 });
    expect(lease?.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    standby.stop.abort();
    await standby.run;
    expect(await holder('two')).toBe('');
  });

  test('a leader that crashes without releasing is replaced after its lease expires', async () => {
    const a = candidate({ lease: 'crash', identity: 'a', releaseOnCancel: false });
    await waitFor('a to lead', () => a.elector.isLeader(), { timeoutMs: timeouts.watchEvent });
    const b = candidate({ lease: 'crash', identity: 'b' });
    await staysTrue('b waits while a renews', () => !b.elector.isLeader(), 1000);
    a.stop.abort();
    await a.run;
    expect(await holder('crash')).toBe('a');
    await waitFor('b to take the expired lease', () => b.elector.isLeader(), { timeoutMs: timeouts.watchEvent });
    const lease = await client.get<Lease>(builtinTypes.lease, { namespace: ns, name: 'crash' });
    expect(lease?.spec?.leaseTransitions).toBe(1);
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
    clock.step(hourMs);
    // Several renew deadlines: a deadline measured on the wall clock would have passed at once.
    await staysTrue('a keeps leading', () => a.elector.isLeader(), 2 * fast.renewDeadlineMs);
    // Renewals went on, stamped with the (stepped) wall time, as the Lease's readers expect.
    const lease = await client.get<Lease>(builtinTypes.lease, { namespace: ns, name: 'forward' });
    expect(Date.parse(lease?.spec?.renewTime ?? '')).toBeGreaterThan(Date.now() + hourMs / 2);
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
    const refusedAt = performance.now();
    // Others may take the lease leaseDuration after its last renewal: a must be gone before that.
    await waitFor('a to give up leading', () => !a.elector.isLeader(), { timeoutMs: fast.leaseDurationMs });
    expect(performance.now() - refusedAt).toBeLessThan(fast.leaseDurationMs);
    await a.run;
    expect(a.seen.leaderSignal?.aborted).toBe(true);
    expect(a.seen.stopped).toBe(1);
    expect(a.stop.signal.aborted).toBe(false);
  });
});
