import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ApiextensionsV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds } from '@metal-l2/test-support/crds';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import {
  builtinTypes,
  Controller,
  createRuntimeMetrics,
  done,
  Informer,
  KubeClient,
  LeadershipLostError,
  Manager,
  silentLogger,
  type Lease,
  type ResourceType,
} from '../src/index.js';
import { newConfigMap, type ConfigMap } from './fixtures.js';

/** A kind that does not exist until this test installs it, so readiness visibly flips. */
const widgetType: ResourceType = { group: 'kubetest.metal-l2.io', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true };
const widgetCrd: V1CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.kubetest.metal-l2.io' },
  spec: {
    group: 'kubetest.metal-l2.io',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
      },
    ],
  },
};

async function probe(address: string | undefined, path: string): Promise<{ status: number; body: string }> {
  if (address === undefined) throw new Error('server not started');
  const res = await fetch(`http://${address}${path}`);
  return { status: res.status, body: await res.text() };
}

describe('Manager against the API server', () => {
  const kc = loadKubeConfig();
  const client = KubeClient.fromKubeConfig(kc);
  const logger = silentLogger();
  let ns = '';

  beforeAll(async () => {
    ns = await createTestNamespace(kc, 'kube-manager');
  });
  afterAll(async () => {
    await deleteTestNamespace(kc, ns);
    client.close();
  });

  test('serves /healthz at once, /readyz once caches synced, and /metrics; stops on request', async () => {
    const metrics = createRuntimeMetrics();
    const manager = new Manager({
      logger,
      metrics,
      healthProbeBindAddress: '127.0.0.1:0',
      metricsBindAddress: '127.0.0.1:0',
      handleSignals: false,
      processMetrics: true,
    });
    const informer = new Informer({ client, type: widgetType, namespace: ns, backoff: { initialMs: 50, maxMs: 500 }, logger, metrics });
    manager.addInformer(informer);
    const stop = new AbortController();
    const running = manager.start(stop.signal);

    await waitFor('the probe server', () => manager.probeAddress(), { timeoutMs: timeouts.watchEvent });
    expect(await probe(manager.probeAddress(), '/healthz')).toEqual({ status: 200, body: 'ok\n' });
    const notReady = await probe(manager.probeAddress(), '/readyz');
    expect(notReady.status).toBe(500);
    expect(notReady.body).toContain('[-]informers-synced failed');

    await installCrds(kc, [widgetCrd]);
    await waitFor('readiness once the cache synced', async () => (await probe(manager.probeAddress(), '/readyz')).status === 200, {
      timeoutMs: timeouts.crdEstablished,
    });
    expect((await probe(manager.probeAddress(), '/readyz?verbose')).body).toContain('[+]informers-synced ok');
    expect((await probe(manager.probeAddress(), '/nope')).status).toBe(404);

    const scraped = await probe(manager.metricsAddress(), '/metrics');
    expect(scraped.status).toBe(200);
    expect(scraped.body).toContain('metal_l2_informer_lists_total{resource="widgets.kubetest.metal-l2.io"} 1');
    expect(scraped.body).toContain('nodejs_heap_size_used_bytes');

    const address = manager.probeAddress();
    stop.abort();
    await running;
    await expect(probe(address, '/healthz')).rejects.toThrow();
  });

  test('readiness goes red while an informer is dead, and green again when it recovers', async () => {
    const sprocketType: ResourceType = {
      group: 'kubetest.metal-l2.io',
      version: 'v1',
      kind: 'Sprocket',
      plural: 'sprockets',
      namespaced: true,
    };
    const sprocketCrd: V1CustomResourceDefinition = {
      ...widgetCrd,
      metadata: { name: 'sprockets.kubetest.metal-l2.io' },
      spec: { ...widgetCrd.spec, names: { kind: 'Sprocket', plural: 'sprockets', singular: 'sprocket', listKind: 'SprocketList' } },
    };
    const extensions = kc.makeApiClient(ApiextensionsV1Api);
    await installCrds(kc, [sprocketCrd]);
    const manager = new Manager({ logger, healthProbeBindAddress: '127.0.0.1:0', handleSignals: false, processMetrics: false });
    const informer = new Informer({
      client,
      type: sprocketType,
      namespace: ns,
      backoff: { initialMs: 50, maxMs: 200 },
      unhealthyAfterMs: 500,
      logger,
    });
    manager.addInformer(informer);
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      await waitFor(
        'ready',
        async () => manager.probeAddress() !== undefined && (await probe(manager.probeAddress(), '/readyz')).status === 200,
        {
          timeoutMs: timeouts.crdEstablished,
        },
      );
      // The kind goes away: every list and watch fails from now on.
      await extensions.deleteCustomResourceDefinition({ name: 'sprockets.kubetest.metal-l2.io' });
      const red = await waitFor(
        'readiness red while the informer fails',
        async () => {
          const answer = await probe(manager.probeAddress(), '/readyz?verbose');
          return answer.status === 500 ? answer : undefined;
        },
        { timeoutMs: timeouts.crdEstablished },
      );
      expect(red.body).toContain('[-]informers-healthy failed');
      expect(red.body).toContain('[+]informers-synced ok');
      await installCrds(kc, [sprocketCrd]);
      await waitFor('readiness green again', async () => (await probe(manager.probeAddress(), '/readyz')).status === 200, {
        timeoutMs: timeouts.crdEstablished,
      });
    } finally {
      stop.abort();
      await running;
      await extensions.deleteCustomResourceDefinition({ name: 'sprockets.kubetest.metal-l2.io' }).catch(() => undefined);
    }
  });

  test('with leader election, only the leader runs controllers; shutdown releases the lease', async () => {
    const reconciledBy: string[] = [];
    const makeManager = (identity: string): { manager: Manager; stop: AbortController; running: Promise<void> } => {
      const informer = new Informer<ConfigMap>({
        client,
        type: builtinTypes.configMap,
        namespace: ns,
        labelSelector: 'test=manager',
        logger,
      });
      const controller = new Controller({
        name: `cm-${identity}`,
        logger,
        reconciler: {
          reconcile: () => {
            reconciledBy.push(identity);
            return Promise.resolve(done());
          },
        },
      });
      controller.watch(informer);
      const manager = new Manager({
        logger,
        handleSignals: false,
        processMetrics: false,
        healthProbeBindAddress: '127.0.0.1:0',
        leaderElection: {
          client,
          namespace: ns,
          name: 'manager-lease',
          identity,
          leaseDurationMs: 3000,
          renewDeadlineMs: 2000,
          retryPeriodMs: 250,
        },
      });
      manager.addController(controller);
      const stop = new AbortController();
      return { manager, stop, running: manager.start(stop.signal) };
    };
    const one = makeManager('one');
    await waitFor('one to lead', () => one.manager.isLeader(), { timeoutMs: timeouts.watchEvent });
    const two = makeManager('two');
    // The standby's caches sync too, so it is ready to take over.
    await waitFor('the standby ready', async () => (await probe(two.manager.probeAddress(), '/readyz')).status === 200, {
      timeoutMs: timeouts.watchEvent,
    });

    await client.create(builtinTypes.configMap, {
      ...newConfigMap(ns, 'managed'),
      metadata: { namespace: ns, name: 'managed', labels: { test: 'manager' } },
    });
    await waitFor('the leader reconciled', () => reconciledBy.includes('one'), { timeoutMs: timeouts.watchEvent });
    expect(reconciledBy).not.toContain('two');

    one.stop.abort();
    await one.running;
    await waitFor('two to take over and reconcile', () => two.manager.isLeader() && reconciledBy.includes('two'), {
      timeoutMs: timeouts.watchEvent,
    });

    two.stop.abort();
    await two.running;
    const lease = await client.get<Lease>(builtinTypes.lease, { namespace: ns, name: 'manager-lease' });
    expect(lease?.spec?.holderIdentity).toBe('');
  });

  test('a manager that loses its lease stops everything and reports it', async () => {
    const manager = new Manager({
      logger,
      handleSignals: false,
      processMetrics: false,
      leaderElection: {
        client,
        namespace: ns,
        name: 'lost-lease',
        identity: 'loser',
        leaseDurationMs: 3000,
        renewDeadlineMs: 2000,
        retryPeriodMs: 250,
      },
    });
    let leaderWorkStopped = false;
    manager.add(
      {
        start: (signal) =>
          new Promise((resolve) => {
            signal.addEventListener('abort', () => {
              leaderWorkStopped = true;
              resolve();
            });
          }),
      },
      { name: 'leader work' },
    );
    const running = manager.start();
    await waitFor('leadership', () => manager.isLeader(), { timeoutMs: timeouts.watchEvent });
    const lease = await client.get<Lease>(builtinTypes.lease, { namespace: ns, name: 'lost-lease' });
    if (lease === undefined) throw new Error('no lease');
    await client.replace(builtinTypes.lease, { ...lease, spec: { ...lease.spec, holderIdentity: 'usurper', leaseDurationSeconds: 60 } });
    await expect(running).rejects.toBeInstanceOf(LeadershipLostError);
    expect(leaderWorkStopped).toBe(true);
  });

  test('a manager that loses its lease aborts reconciles in progress and does not wait for them', async () => {
    const informer = new Informer<ConfigMap>({
      client,
      type: builtinTypes.configMap,
      namespace: ns,
      labelSelector: 'test=lost-in-flight',
      logger,
    });
    const inFlight: { signal?: AbortSignal; abortedWhenLost?: boolean } = {};
    const controller = new Controller({
      name: 'in-flight',
      logger,
      reconciler: {
        // A step that does not stop when told to (a call without the signal): it never returns.
        reconcile: (_key, ctx) => {
          inFlight.signal = ctx.signal;
          return new Promise<never>(() => undefined);
        },
      },
    });
    controller.watch(informer);
    const manager = new Manager({
      logger,
      handleSignals: false,
      processMetrics: false,
      gracefulShutdownTimeoutMs: 60_000,
      leaderElection: {
        client,
        namespace: ns,
        name: 'lost-in-flight',
        identity: 'loser',
        leaseDurationMs: 3000,
        renewDeadlineMs: 2000,
        retryPeriodMs: 250,
      },
      onLeadershipLost: () => {
        inFlight.abortedWhenLost = inFlight.signal?.aborted === true;
      },
    });
    manager.addController(controller);
    const running = manager.start();
    const outcome = running.then(
      () => 'resolved',
      (err: unknown) => err,
    );
    await waitFor('leadership', () => manager.isLeader(), { timeoutMs: timeouts.watchEvent });
    await client.create(builtinTypes.configMap, {
      ...newConfigMap(ns, 'in-flight'),
      metadata: { namespace: ns, name: 'in-flight', labels: { test: 'lost-in-flight' } },
    });
    const signal = await waitFor('a reconcile in progress', () => inFlight.signal, { timeoutMs: timeouts.watchEvent });
    expect(signal.aborted).toBe(false);
    const lease = await client.get<Lease>(builtinTypes.lease, { namespace: ns, name: 'lost-in-flight' });
    if (lease === undefined) throw new Error('no lease');
    await client.replace(builtinTypes.lease, { ...lease, spec: { ...lease.spec, holderIdentity: 'usurper', leaseDurationSeconds: 60 } });
    // The next renewal (a retry period away) finds the usurper; the manager must not sit out its
    // graceful shutdown timeout for the reconcile that ignores its signal.
    const stoppedWith = await waitFor('the manager to stop', () => Promise.race([outcome, Promise.resolve(undefined)]), {
      timeoutMs: timeouts.watchEvent,
    });
    expect(stoppedWith).toBeInstanceOf(LeadershipLostError);
    expect(signal.aborted).toBe(true);
    // The hook ran after the reconcile's signal had aborted.
    expect(inFlight.abortedWhenLost).toBe(true);
  });

  test('SIGTERM stops a manager gracefully', async () => {
    const manager = new Manager({ logger, processMetrics: false });
    let stoppedBySignal = false;
    let began = false;
    manager.add(
      {
        start: (signal) =>
          new Promise((resolve) => {
            began = true;
            signal.addEventListener('abort', () => {
              stoppedBySignal = true;
              resolve();
            });
          }),
      },
      { name: 'waits for the signal', needsLeaderElection: false },
    );
    const listenersBefore = process.listenerCount('SIGTERM');
    const running = manager.start();
    await waitFor('the runnable to start', () => began, { timeoutMs: timeouts.watchEvent });
    process.emit('SIGTERM', 'SIGTERM');
    await running;
    expect(stoppedBySignal).toBe(true);
    expect(process.listenerCount('SIGTERM')).toBe(listenersBefore);
  });
});
