import { readdirSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import {
  builtinTypes,
  Informer,
  KubeClient,
  silentLogger,
  type KubeObject,
  type ListItemsOptions,
  type ListResult,
  type ResourceType,
  type WatchEvent,
  type WatchOptions,
} from '../src/index.js';
import { openNamespacedWatches } from './apiserver-metrics.js';
import { claimType, newClaim, newConfigMap, type ConfigMap, type IPAddressClaim } from './fixtures.js';

const podTemplates: ResourceType = { group: '', version: 'v1', kind: 'PodTemplate', plural: 'podtemplates', namespaced: true };

function newPodTemplate(namespace: string, name: string): KubeObject & Record<string, unknown> {
  return { metadata: { namespace, name }, template: { spec: { containers: [{ name: 'c', image: 'example.invalid/none' }] } } };
}

/** Records what handlers saw, as "event name" strings. */
function record<T extends KubeObject>(informer: Informer<T>): string[] {
  const seen: string[] = [];
  informer.onAdd((o) => seen.push(`add ${o.metadata.name ?? ''}`));
  informer.onUpdate((_old, o) => seen.push(`update ${o.metadata.name ?? ''}`));
  informer.onDelete((o) => seen.push(`delete ${o.metadata.name ?? ''}`));
  return seen;
}

/** A real client whose first watch resumes from resourceVersion "1", far older than the server keeps. */
class ResumesFromAncientVersion extends KubeClient {
  watches = 0;
  override watch<T extends KubeObject>(type: ResourceType, options: WatchOptions, onEvent: (event: WatchEvent<T>) => void): Promise<void> {
    this.watches += 1;
    return super.watch(type, this.watches === 1 ? { ...options, resourceVersion: '1' } : options, onEvent);
  }
}

/** A real client that counts the lists it sends. */
class CountsLists extends KubeClient {
  lists = 0;
  override list<T extends KubeObject = KubeObject>(type: ResourceType, options: ListItemsOptions<T> = {}): Promise<ListResult<T>> {
    this.lists += 1;
    return super.list<T>(type, options);
  }
}

/** A real client whose watches lose every DELETED event, as a broken connection might. */
class LosesDeletes extends KubeClient {
  override watch<T extends KubeObject>(type: ResourceType, options: WatchOptions, onEvent: (event: WatchEvent<T>) => void): Promise<void> {
    return super.watch<T>(type, options, (event) => {
      if (event.type !== 'DELETED') onEvent(event);
    });
  }
}

/**
 * A real client whose first watch breaks right after delivering one event, the way a connection
 * the API server drops for a slow reader ends: with an error, not a clean close.
 */
class BreaksAfterFirstEvent extends KubeClient {
  watches = 0;
  override async watch<T extends KubeObject>(
    type: ResourceType,
    options: WatchOptions,
    onEvent: (event: WatchEvent<T>) => void,
  ): Promise<void> {
    this.watches += 1;
    if (this.watches !== 1) return super.watch(type, options, onEvent);
    const inner = new AbortController();
    options.signal.addEventListener('abort', () => inner.abort(), { once: true });
    let delivered = false;
    await super.watch<T>(type, { ...options, signal: inner.signal }, (event) => {
      onEvent(event);
      if (event.type !== 'BOOKMARK' && !delivered) {
        delivered = true;
        inner.abort();
      }
    });
    if (delivered) throw new Error('watch connection closed before the response ended');
  }
}

describe('Informer against the API server', () => {
  const kc = loadKubeConfig();
  const client = KubeClient.fromKubeConfig(kc);
  const logger = silentLogger();
  const stops: AbortController[] = [];
  const informers: Informer<KubeObject>[] = [];
  let ns = '';

  function startable<T extends KubeObject>(informer: Informer<T>): { informer: Informer<T>; signal: AbortSignal } {
    const stop = new AbortController();
    stops.push(stop);
    informers.push(informer as unknown as Informer<KubeObject>);
    return { informer, signal: stop.signal };
  }

  beforeAll(async () => {
    await installCrds(kc, await upstreamCrds('capiV1_14'));
    ns = await createTestNamespace(kc, 'kube-informer');
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) stop.abort();
    await Promise.all(informers.splice(0).map((i) => i.stopped()));
  });
  afterAll(async () => {
    await deleteTestNamespace(kc, ns);
    client.close();
  });

  test('lists what exists, then sees adds, updates and deletes; indexes follow', async () => {
    await client.create(builtinTypes.configMap, {
      ...newConfigMap(ns, 'before'),
      metadata: { namespace: ns, name: 'before', labels: { pool: 'a' } },
    });
    const { informer, signal } = startable(
      new Informer<ConfigMap>({ client, type: builtinTypes.configMap, namespace: ns, labelSelector: 'pool', logger }),
    );
    informer.addIndex('pool', (cm) => [cm.metadata.labels?.['pool'] ?? '']);
    const seen = record(informer);
    expect(informer.hasSynced()).toBe(false);
    await informer.start(signal);
    expect(informer.hasSynced()).toBe(true);
    expect(informer.get({ namespace: ns, name: 'before' })?.metadata.labels).toEqual({ pool: 'a' });
    expect(seen).toEqual(['add before']);

    await client.create(builtinTypes.configMap, {
      ...newConfigMap(ns, 'after'),
      metadata: { namespace: ns, name: 'after', labels: { pool: 'b' } },
    });
    const added = await waitFor('the new object in the cache', () => informer.get(`${ns}/after`), { timeoutMs: timeouts.watchEvent });
    expect(typeof added.metadata.creationTimestamp).toBe('string');
    // The server keeps managedFields; the cache does not (memory).
    expect((await client.get<ConfigMap>(builtinTypes.configMap, { namespace: ns, name: 'after' }))?.metadata.managedFields).toBeDefined();
    expect(added.metadata.managedFields).toBeUndefined();
    expect(informer.byIndex('pool', 'b').map((o) => o.metadata.name)).toEqual(['after']);

    await client.patch(builtinTypes.configMap, { namespace: ns, name: 'after' }, { metadata: { labels: { pool: 'a' } } });
    await waitFor('the update in the index', () => informer.byIndex('pool', 'a').length === 2, { timeoutMs: timeouts.watchEvent });
    expect(informer.byIndex('pool', 'b')).toEqual([]);

    await client.delete(builtinTypes.configMap, { namespace: ns, name: 'before' });
    await waitFor('the deletion', () => informer.get(`${ns}/before`) === undefined, { timeoutMs: timeouts.watchEvent });
    expect(seen).toEqual(['add before', 'add after', 'update after', 'delete before']);
    expect(informer.list(ns).map((o) => o.metadata.name)).toEqual(['after']);
    expect(informer.list('elsewhere')).toEqual([]);
    expect(informer.stats()).toMatchObject({ lists: 1, gone: 0, errors: 0 });
  });

  test('a silent watch is restarted by the watchdog, and the server never holds two watches of ours', async () => {
    const { informer, signal } = startable(new Informer({ client, type: podTemplates, namespace: ns, watchdogMs: 200, logger }));
    await informer.start(signal);
    await waitFor('a first watchdog restart', () => informer.stats().watchdogFirings >= 1, { timeoutMs: timeouts.watchEvent });
    const descriptorsBefore = readdirSync('/proc/self/fd').length;
    await waitFor('ten more watchdog restarts', () => informer.stats().watchdogFirings >= 11, { timeoutMs: timeouts.watchEvent });
    // client-node 1.x leaks a socket per watch reconnect; ours reuse the pool and close what they abort.
    expect(readdirSync('/proc/self/fd').length - descriptorsBefore).toBeLessThanOrEqual(2);
    await waitFor('exactly one open watch on the server', async () => (await openNamespacedWatches('podtemplates')) === 1, {
      timeoutMs: timeouts.watchEvent,
    });

    await client.create(podTemplates, newPodTemplate(ns, 'late'));
    await waitFor('an object created after the restarts', () => informer.get(`${ns}/late`), { timeoutMs: timeouts.watchEvent });
    expect(informer.stats().gone).toBe(0);
  });

  test('a watch the server ends is resumed from the last resourceVersion without a relist', async () => {
    const { informer, signal } = startable(
      new Informer<ConfigMap>({ client, type: builtinTypes.configMap, namespace: ns, watchTimeoutSeconds: 1, logger }),
    );
    const seen = record(informer);
    await informer.start(signal);
    const listsAfterSync = informer.stats().lists;
    await waitFor('two server-side watch ends', () => informer.stats().restarts >= 2, { timeoutMs: timeouts.watchEvent });
    await client.create(builtinTypes.configMap, newConfigMap(ns, 'after-timeouts'));
    await waitFor('the object created after the watch ended', () => seen.includes('add after-timeouts'), {
      timeoutMs: timeouts.watchEvent,
    });
    expect(informer.stats().lists).toBe(listsAfterSync);
  });

  // The watch cache of a custom resource starts at the etcd revision of its CRD's creation, so
  // resourceVersion "1" is below its window: the server answers with an ERROR event, 410 Expired.
  // (Built-in kinds are cached from the API server's first moments, where "1" may still be served.)
  test('a watch that breaks after delivering events resumes at once from where it was, without a relist or backoff', async () => {
    const breaking = new BreaksAfterFirstEvent({ kubeConfig: kc });
    const { informer, signal } = startable(
      new Informer<ConfigMap>({ client: breaking, type: builtinTypes.configMap, namespace: ns, labelSelector: 'broken', logger }),
    );
    await informer.start(signal);
    await client.create(builtinTypes.configMap, {
      ...newConfigMap(ns, 'broken-1'),
      metadata: { namespace: ns, name: 'broken-1', labels: { broken: 'yes' } },
    });
    await waitFor('the first event', () => informer.get(`${ns}/broken-1`), { timeoutMs: timeouts.watchEvent });
    await waitFor('the second watch', () => breaking.watches >= 2, { timeoutMs: timeouts.watchEvent });
    await client.create(builtinTypes.configMap, {
      ...newConfigMap(ns, 'broken-2'),
      metadata: { namespace: ns, name: 'broken-2', labels: { broken: 'yes' } },
    });
    await waitFor('the event after the break', () => informer.get(`${ns}/broken-2`), { timeoutMs: timeouts.watchEvent });
    // Progress kept: no relist, and the break is a restart, not an error that backs off.
    expect(informer.stats()).toMatchObject({ lists: 1, errors: 0, gone: 0 });
    breaking.close();
  });

  test('410 Gone on a watch from an ancient resourceVersion leads to a relist, and the cache recovers', async () => {
    await client.create(claimType, newClaim(ns, 'gone-1'));
    const ancient = new ResumesFromAncientVersion({ kubeConfig: kc });
    const { informer, signal } = startable(new Informer<IPAddressClaim>({ client: ancient, type: claimType, namespace: ns, logger }));
    await informer.start(signal);
    await waitFor('the 410 and the relist after it', () => informer.stats().gone === 1 && informer.stats().lists === 2, {
      timeoutMs: timeouts.watchEvent,
    });
    expect(informer.get(`${ns}/gone-1`)).toBeDefined();
    await client.create(claimType, newClaim(ns, 'gone-2'));
    await waitFor('an object created after the relist', () => informer.get(`${ns}/gone-2`), { timeoutMs: timeouts.watchEvent });
    expect(informer.stats().errors).toBe(0);
    ancient.close();
  });

  test('a periodic relist, when asked for, delivers what the watch lost', async () => {
    const lossy = new LosesDeletes({ kubeConfig: kc });
    await client.create(builtinTypes.configMap, newConfigMap(ns, 'relist-keep'));
    await client.create(builtinTypes.configMap, newConfigMap(ns, 'relist-drop'));
    const { informer, signal } = startable(
      new Informer<ConfigMap>({ client: lossy, type: builtinTypes.configMap, namespace: ns, relistIntervalMs: 1000, logger }),
    );
    const deleted: string[] = [];
    informer.onDelete((o) => deleted.push(o.metadata.name ?? ''));
    await informer.start(signal);
    await client.delete(builtinTypes.configMap, { namespace: ns, name: 'relist-drop' });
    await waitFor('the lost deletion, delivered by a relist', () => deleted.includes('relist-drop'), { timeoutMs: timeouts.watchEvent });
    expect(informer.get(`${ns}/relist-drop`)).toBeUndefined();
    expect(informer.get(`${ns}/relist-keep`)).toBeDefined();
    expect(informer.stats().lists).toBeGreaterThanOrEqual(2);
    lossy.close();
  });

  test('the periodic resync re-announces every cached object from the cache, without a list', async () => {
    await client.create(builtinTypes.configMap, newConfigMap(ns, 'resync-a'));
    await client.create(builtinTypes.configMap, newConfigMap(ns, 'resync-b'));
    const counting = new CountsLists({ kubeConfig: kc });
    const { informer, signal } = startable(
      new Informer<ConfigMap>({ client: counting, type: builtinTypes.configMap, namespace: ns, resyncIntervalMs: 300, logger }),
    );
    const resynced = new Map<string, number>();
    informer.on('resync', (o) => resynced.set(o.metadata.name ?? '', (resynced.get(o.metadata.name ?? '') ?? 0) + 1));
    await informer.start(signal);
    await waitFor(
      'each object re-announced three times',
      () => (resynced.get('resync-a') ?? 0) >= 3 && (resynced.get('resync-b') ?? 0) >= 3,
      {
        timeoutMs: timeouts.watchEvent,
      },
    );
    // Only the first list reached the server (a relist of 21,000 claims every period is what the
    // fill bench found costing most of a burst's rate).
    expect(counting.lists).toBe(1);
    expect(informer.stats()).toMatchObject({ lists: 1, relists: 0 });
    counting.close();
  });

  test('a failing list is retried with backoff until the resource appears', async () => {
    const missing: ResourceType = { group: 'nowhere.metal-l2.test', version: 'v1', kind: 'Nothing', plural: 'nothings', namespaced: true };
    const { informer, signal } = startable(
      new Informer({ client, type: missing, namespace: ns, backoff: { initialMs: 50, maxMs: 200 }, logger }),
    );
    void informer.start(signal);
    await waitFor('several failed attempts', () => informer.stats().errors >= 3, { timeoutMs: timeouts.watchEvent });
    expect(informer.hasSynced()).toBe(false);
  });

  test('start resolves when the signal aborts before the first sync', async () => {
    const missing: ResourceType = { group: 'nowhere.metal-l2.test', version: 'v1', kind: 'Nothing', plural: 'nothings', namespaced: true };
    const stop = new AbortController();
    const informer = new Informer({ client, type: missing, namespace: ns, logger });
    const started = informer.start(stop.signal);
    stop.abort();
    await started;
    await informer.stopped();
    expect(informer.hasSynced()).toBe(false);
  });
});
