import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
import {
  builtinTypes,
  Controller,
  createLogger,
  createRuntimeMetrics,
  done,
  Informer,
  keyString,
  KubeClient,
  requeueAfter,
  silentLogger,
  TerminalError,
  type ObjectKey,
  type ReconcileContext,
  type ReconcileResult,
} from '../src/index.js';
import { newConfigMap, type ConfigMap } from './fixtures.js';

/** A promise the test resolves by hand: lets a reconcile block until the test has looked. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

async function metricValue(
  metrics: ReturnType<typeof createRuntimeMetrics>,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = await metrics.registry.getSingleMetric(name)?.get();
  const match = metric?.values.find((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want));
  return match?.value ?? 0;
}

describe('Controller against the API server', () => {
  const kc = loadKubeConfig();
  const client = KubeClient.fromKubeConfig(kc);
  const logger = silentLogger();
  let ns = '';

  beforeAll(async () => {
    ns = await createTestNamespace(kc, 'kube-controller');
  });
  afterAll(async () => {
    await deleteTestNamespace(kc, ns);
    client.close();
  });

  function configMapInformer(label: string): Informer<ConfigMap> {
    return new Informer<ConfigMap>({ client, type: builtinTypes.configMap, namespace: ns, labelSelector: `test=${label}`, logger });
  }

  async function createLabelled(label: string, name: string, extra: Record<string, string> = {}): Promise<void> {
    await client.create(builtinTypes.configMap, {
      ...newConfigMap(ns, name),
      metadata: { namespace: ns, name, labels: { test: label, ...extra } },
    });
  }

  test('reconciles every object with at most `concurrency` reconciles at once, never one key twice at once', async () => {
    for (let i = 0; i < 10; i++) await createLabelled('bounded', `bounded-${i}`);
    const release = gate();
    let inFlight = 0;
    let maxInFlight = 0;
    const holding = new Set<string>();
    const overlaps: string[] = [];
    const reconciled = new Set<string>();
    const controller = new Controller({
      name: 'bounded',
      concurrency: 3,
      logger,
      reconciler: {
        reconcile: async (key: ObjectKey): Promise<ReconcileResult> => {
          const k = keyString(key);
          if (holding.has(k)) overlaps.push(k);
          holding.add(k);
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await release.wait;
          inFlight -= 1;
          holding.delete(k);
          reconciled.add(k);
          return done();
        },
      },
    });
    const informer = configMapInformer('bounded');
    controller.watch(informer);
    const stop = new AbortController();
    const running = controller.start(stop.signal);

    await waitFor('three reconciles in flight', () => inFlight === 3, { timeoutMs: timeouts.watchEvent });
    // Updates of held keys arrive meanwhile; they must wait for the running reconcile.
    await client.patch(builtinTypes.configMap, { namespace: ns, name: 'bounded-0' }, { data: { touched: 'yes' } });
    await staysTrue('no fourth reconcile starts', () => inFlight === 3, 300);
    release.open();
    await waitFor('all ten reconciled', () => reconciled.size === 10, { timeoutMs: timeouts.watchEvent });
    stop.abort();
    await running;
    await informer.stopped();
    expect(maxInFlight).toBe(3);
    expect(overlaps).toEqual([]);
  });

  test('an update whose old and new object map to the same key is reconciled once, not twice', async () => {
    await createLabelled('once', 'once-0');
    const informer = configMapInformer('once');
    /** What each reconcile saw of the object: data.round from the cache. */
    const seen: string[] = [];
    const controller = new Controller({
      name: 'once',
      logger,
      reconciler: {
        reconcile: (key: ObjectKey): Promise<ReconcileResult> => {
          seen.push(informer.get(key)?.data?.['round'] ?? 'created');
          return Promise.resolve(done());
        },
      },
    });
    controller.watch(informer);
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    await waitFor('the create reconciled', () => seen.includes('created'), { timeoutMs: timeouts.watchEvent });
    // The worker is idle when each update arrives: the case where the second add of the key (the
    // old object's, then the new one's), made while its first reconcile runs, queued it again.
    for (const round of ['1', '2', '3', 'last']) {
      await client.patch(builtinTypes.configMap, { namespace: ns, name: 'once-0' }, { data: { round } });
      await waitFor(`update ${round} reconciled`, () => seen.includes(round), { timeoutMs: timeouts.watchEvent });
    }
    stop.abort();
    await running;
    await informer.stopped();
    // A second reconcile of an update runs right after its first, before the next update's.
    expect(seen).toEqual(['created', '1', '2', '3', 'last']);
  });

  test('a failing reconcile is retried with backoff until it succeeds; a terminal one is not retried', async () => {
    await createLabelled('retry', 'flaky');
    await createLabelled('retry', 'broken');
    await createLabelled('retry', 'later');
    const attempts = new Map<string, number>();
    const metrics = createRuntimeMetrics();
    const controller = new Controller({
      name: 'retry',
      logger,
      metrics,
      reconciler: {
        reconcile: (key: ObjectKey): Promise<ReconcileResult> => {
          const n = (attempts.get(key.name) ?? 0) + 1;
          attempts.set(key.name, n);
          if (key.name === 'flaky' && n <= 2) return Promise.reject(new Error(`transient failure ${n}`));
          if (key.name === 'broken') return Promise.reject(new TerminalError('spec.addresses is empty', { reason: 'InvalidSpec' }));
          if (key.name === 'later' && n === 1) return Promise.resolve(requeueAfter(200));
          return Promise.resolve(done());
        },
      },
    });
    const informer = configMapInformer('retry');
    controller.watch(informer);
    const stop = new AbortController();
    const running = controller.start(stop.signal);

    await waitFor('flaky to succeed on its third attempt', () => attempts.get('flaky') === 3, { timeoutMs: timeouts.watchEvent });
    await waitFor('later to come back after its delay', () => attempts.get('later') === 2, { timeoutMs: timeouts.watchEvent });
    await staysTrue('broken is not retried', () => attempts.get('broken') === 1, 500);
    expect(attempts.get('flaky')).toBe(3);

    stop.abort();
    await running;
    await informer.stopped();
    expect(await metricValue(metrics, 'controller_runtime_reconcile_total', { controller: 'retry', result: 'error' })).toBe(2);
    expect(await metricValue(metrics, 'controller_runtime_reconcile_total', { controller: 'retry', result: 'terminal_error' })).toBe(1);
    expect(await metricValue(metrics, 'controller_runtime_reconcile_total', { controller: 'retry', result: 'requeue_after' })).toBe(1);
    expect(await metricValue(metrics, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'retry' })).toBe(1);
    expect(await metricValue(metrics, 'workqueue_retries_total', { name: 'retry' })).toBe(2);
    const histogram = await metrics.registry.getSingleMetric('controller_runtime_reconcile_time_seconds')?.get();
    expect(
      histogram?.values.find((v) => (v as { metricName?: string }).metricName === 'controller_runtime_reconcile_time_seconds_count')?.value,
    ).toBeGreaterThanOrEqual(6);
  });

  test('a TerminalError wrapped in a cause is still terminal; a reconcile past its deadline is aborted and retried', async () => {
    await createLabelled('deadline', 'wrapped');
    await createLabelled('deadline', 'hung');
    const attempts = new Map<string, number>();
    const aborted: string[] = [];
    const metrics = createRuntimeMetrics();
    const controller = new Controller({
      name: 'deadline',
      logger,
      metrics,
      reconcileTimeoutMs: 300,
      reconciler: {
        reconcile: (key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> => {
          const n = (attempts.get(key.name) ?? 0) + 1;
          attempts.set(key.name, n);
          if (key.name === 'wrapped') {
            const terminal = new TerminalError('spec.addresses is empty', { reason: 'InvalidSpec' });
            return Promise.reject(new Error('reconcile ConfigMap wrapped', { cause: terminal }));
          }
          if (n >= 2) return Promise.resolve(done());
          // Hangs until its signal aborts: only the deadline can end it.
          return new Promise((_resolve, reject) => {
            ctx.signal.addEventListener('abort', () => {
              aborted.push(key.name);
              reject(new Error('hung call aborted', { cause: ctx.signal.reason }));
            });
          });
        },
      },
    });
    const informer = configMapInformer('deadline');
    controller.watch(informer);
    const stop = new AbortController();
    const running = controller.start(stop.signal);

    await waitFor('the hung reconcile to be aborted and retried', () => attempts.get('hung') === 2, { timeoutMs: timeouts.watchEvent });
    expect(aborted).toEqual(['hung']);
    await staysTrue('wrapped is not retried', () => attempts.get('wrapped') === 1, 500);

    stop.abort();
    await running;
    await informer.stopped();
    expect(await metricValue(metrics, 'controller_runtime_reconcile_total', { controller: 'deadline', result: 'terminal_error' })).toBe(1);
    expect(await metricValue(metrics, 'controller_runtime_reconcile_total', { controller: 'deadline', result: 'error' })).toBe(1);
  });

  test('events on one kind map to keys of another, and each reconcile logs with its own context', async () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    stream.on('data', (c: Buffer) =>
      lines.push(
        ...c
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      ),
    );
    const reconciled: string[] = [];
    const contexts: ReconcileContext[] = [];
    const controller = new Controller({
      name: 'mapped',
      logger: createLogger({ level: 'debug', stream }),
      reconciler: {
        reconcile: (key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> => {
          reconciled.push(keyString(key));
          contexts.push(ctx);
          ctx.logger.info('looked at the parent');
          return Promise.resolve(done());
        },
      },
    });
    const children = configMapInformer('child');
    controller.watch(children, (child) => [{ namespace: ns, name: child.metadata.labels?.['parent'] ?? '' }]);
    const stop = new AbortController();
    const running = controller.start(stop.signal);
    await createLabelled('child', 'child-1', { parent: 'parent-a' });
    await waitFor('the parent reconciled for its child', () => reconciled.includes(`${ns}/parent-a`), { timeoutMs: timeouts.watchEvent });
    expect(reconciled).not.toContain(`${ns}/child-1`);

    stop.abort();
    await running;
    await children.stopped();
    const line = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l['msg'] === 'looked at the parent');
    expect(line).toMatchObject({ controller: 'mapped', namespace: ns, name: 'parent-a', reconcileID: contexts[0]?.reconcileID });
    expect(contexts[0]?.signal.aborted).toBe(true);
  });

  test('start returns only after in-flight reconciles finished, and they see the stop', async () => {
    await createLabelled('shutdown', 'slow');
    const release = gate();
    let sawAbort = false;
    let began = false;
    let finished = false;
    const controller = new Controller({
      name: 'shutdown',
      logger,
      reconciler: {
        reconcile: async (_key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> => {
          began = true;
          await release.wait;
          sawAbort = ctx.signal.aborted;
          finished = true;
          return done();
        },
      },
    });
    const informer = configMapInformer('shutdown');
    controller.watch(informer);
    const stop = new AbortController();
    let returned = false;
    const running = controller.start(stop.signal).then(() => {
      returned = true;
    });
    await waitFor('the reconcile to be in flight', () => began, { timeoutMs: timeouts.watchEvent });
    stop.abort();
    await staysTrue('start has not returned while a reconcile runs', () => !returned, 200);
    release.open();
    await running;
    await informer.stopped();
    expect(finished).toBe(true);
    expect(sawAbort).toBe(true);
    expect(() => controller.enqueue({ namespace: ns, name: 'x' })).not.toThrow();
  });
});
