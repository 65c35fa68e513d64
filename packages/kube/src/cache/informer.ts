import type { KubeClient } from '../client/kube-client.js';
import type { WatchEvent } from '../client/watch-stream.js';
import { Backoff, realClock, sleep, type Clock } from '../clock.js';
import { isGone, type KubeApiError } from '../errors.js';
import { errorFields, type Logger } from '../log.js';
import type { RuntimeMetrics } from '../metrics.js';
import { keyString, type KubeObject, type ObjectKey, type ResourceType } from '../resource.js';
import { Indexer, type IndexFunction } from './indexer.js';
import { applyWatchEvent, cacheKey, replaceAll, type CacheEvent } from './store.js';

/** Handler signatures per event. `resync`: the periodic resync re-announces a cached object. */
export interface InformerHandlers<T extends KubeObject> {
  add: (obj: T) => void;
  update: (oldObj: T, newObj: T) => void;
  delete: (obj: T) => void;
  resync: (obj: T) => void;
}

export type InformerEventName = keyof InformerHandlers<KubeObject>;

export interface InformerOptions<T extends KubeObject = KubeObject> {
  readonly client: KubeClient;
  readonly type: ResourceType;
  /** Watch one namespace; all namespaces when absent. */
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /**
   * Re-announce every cached object (the `resync` event) this often, from the cache, as client-go
   * does: controllers get their periodic second look without a request. Default 5 min.
   */
  readonly resyncIntervalMs?: number;
  /**
   * A full list this often, diffed into events, for a server suspected of losing watch events.
   * Off by default: a watch resumed from its resourceVersion misses nothing, and a list of a big
   * collection is the one cost of a cache that grows with it (21,000 claims listed every 5 min
   * cost a burst on a full pool most of its rate). A 410 Gone still relists.
   */
  readonly relistIntervalMs?: number;
  /**
   * Restart a watch that delivered nothing (bookmarks included) for this long. The API server
   * sends a bookmark about once a minute on a quiet watch, so the default of 150 s only fires on
   * a watch that is really dead (a half-open connection, which client-node 1.x never notices).
   */
  readonly watchdogMs?: number;
  /** Ask the server to end each watch after this long; default a random 5–10 min as client-go does. */
  readonly watchTimeoutSeconds?: number;
  /** Backoff after failed lists/watches. Default 1 s doubling to 30 s. */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  /** Unhealthy (isHealthy false) once lists and watches have failed without a success this long. Default 60 s. */
  readonly unhealthyAfterMs?: number;
  readonly pageSize?: number;
  /**
   * Shapes each object fresh off the wire before it is cached (after managedFields are dropped),
   * as controller-runtime's cache TransformFunc does: keep only what the controllers read, so a
   * cache of many objects holds the few fields a decision needs. It may mutate its argument and
   * must keep metadata.namespace, name and resourceVersion. Handlers see the shaped objects.
   */
  readonly transform?: (obj: T) => T;
  readonly logger: Logger;
  readonly metrics?: RuntimeMetrics;
  readonly clock?: Clock;
}

/** Counters of what the informer did; for tests and debugging (the same feed metrics). */
export interface InformerStats {
  /** Successful full lists, the first one included. */
  lists: number;
  /** Lists after the first: periodic, after 410 Gone, after a failed list. */
  relists: number;
  /** Watch requests started. */
  watches: number;
  /** Watches that ended and were started again, for any reason. */
  restarts: number;
  /** 410 Gone answers (HTTP or ERROR event) that forced a relist. */
  gone: number;
  /** Watches the watchdog ended for silence. */
  watchdogFirings: number;
  /** Lists or watches that failed with something other than 410 (then backed off). */
  errors: number;
  /** Object events delivered by watches (not bookmarks). */
  events: number;
}

/** What the manager and controllers need of any informer, whatever its object type. */
export interface InformerHandle {
  readonly type: ResourceType;
  start(signal: AbortSignal): Promise<void>;
  stopped(): Promise<void>;
  hasSynced(): boolean;
  /** False while the cache no longer follows the server: see Informer.isHealthy. */
  isHealthy(): boolean;
}

type WatchEnd = 'closed' | 'watchdog' | 'relist' | 'aborted';

const defaultResyncIntervalMs = 5 * 60_000;

/**
 * Drops metadata.managedFields from an object fresh off the wire, before it is cached: no
 * reconciler reads them, and on objects written by several managers they are often the larger
 * half of the object (as client-go informers do with a transform). Mutates the parsed JSON.
 */
function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata.managedFields !== undefined) delete obj.metadata.managedFields;
  return obj;
}
const defaultWatchdogMs = 150_000;
const defaultUnhealthyAfterMs = 60_000;

/**
 * A local cache of one kind, kept current by list + watch:
 * - paginated list, then a watch from the list's resourceVersion with bookmarks;
 * - 410 Gone (HTTP or ERROR event) → relist and diff; any other failure → restart with
 *   exponential backoff; a clean close → resume from the last resourceVersion seen;
 * - a periodic resync from the cache (no request); a periodic relist only when asked for;
 * - a watchdog that restarts a watch that stayed silent too long;
 * - one request at a time: the previous watch is aborted and finished before the next starts.
 * Objects handed out are the cached instances: treat them as read-only (clone before editing).
 */
export class Informer<T extends KubeObject> implements InformerHandle {
  private readonly store = new Map<string, T>();
  /**
   * Each cached object's key, one string per object whatever its version: the store, the indexes
   * and handlers share it instead of building `namespace/name` again on every event (names run to
   * 253 characters, and a cache of 65,534 claims held three copies of each).
   */
  private readonly keys = new WeakMap<T, string>();
  private readonly indexer = new Indexer<T>();
  private readonly handlers: { [E in InformerEventName]: InformerHandlers<T>[E][] } = { add: [], update: [], delete: [], resync: [] };
  private readonly counters: InformerStats = {
    lists: 0,
    relists: 0,
    watches: 0,
    restarts: 0,
    gone: 0,
    watchdogFirings: 0,
    errors: 0,
    events: 0,
  };
  private synced = false;
  /** When the current streak of failed lists/watches began; undefined after any success. */
  private failingSince: number | undefined;
  /** The loop ended on an unexpected error: nothing will ever update the cache again. */
  private dead = false;
  private running: Promise<void> | undefined;
  private syncWaiters: (() => void)[] = [];
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly resourceName: string;

  constructor(private readonly options: InformerOptions<T>) {
    this.clock = options.clock ?? realClock;
    this.resourceName = options.type.group === '' ? options.type.plural : `${options.type.plural}.${options.type.group}`;
    this.logger = options.logger.child({
      informer: this.resourceName,
      ...(options.namespace !== undefined ? { namespace: options.namespace } : {}),
    });
  }

  get type(): ResourceType {
    return this.options.type;
  }

  /** Subscribes a handler; returns a function that unsubscribes it. Handlers run in event order. */
  on<E extends InformerEventName>(event: E, handler: InformerHandlers<T>[E]): () => void {
    const list = this.handlers[event];
    list.push(handler);
    return () => {
      const at = list.indexOf(handler);
      if (at >= 0) list.splice(at, 1);
    };
  }

  onAdd(handler: InformerHandlers<T>['add']): () => void {
    return this.on('add', handler);
  }

  onUpdate(handler: InformerHandlers<T>['update']): () => void {
    return this.on('update', handler);
  }

  onDelete(handler: InformerHandlers<T>['delete']): () => void {
    return this.on('delete', handler);
  }

  /**
   * Starts list + watch. Only the first call starts anything, and its signal governs how long
   * the informer runs; later calls (a second controller sharing the informer) just wait. Resolves
   * when the first list is in the cache, or when the caller's signal aborts first (check
   * hasSynced()). Keeps watching in the background; stopped() resolves once it has ended.
   */
  start(signal: AbortSignal): Promise<void> {
    if (this.running === undefined) {
      this.running = this.run(signal).catch((err: unknown) => {
        this.dead = true;
        this.logger.error('informer stopped on an unexpected error', { err: errorFields(err) });
      });
      void this.running.finally(() => this.releaseSyncWaiters());
    }
    if (this.synced || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const onAbort = (): void => resolve();
      signal.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** Resolves once the informer was started and its loop has ended (after the signal aborted). */
  async stopped(): Promise<void> {
    await this.running;
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /**
   * False once the loop has died, or while lists and watches have kept failing for longer than
   * unhealthyAfterMs (a deleted CRD, lost RBAC, an unreachable server): the cache is then stale.
   * True again after the next successful list or watch event. For /readyz.
   */
  isHealthy(): boolean {
    if (this.dead) return false;
    return (
      this.failingSince === undefined ||
      this.clock.monotonic() - this.failingSince < (this.options.unhealthyAfterMs ?? defaultUnhealthyAfterMs)
    );
  }

  get(key: ObjectKey | string): T | undefined {
    return this.store.get(typeof key === 'string' ? key : keyString(key));
  }

  /** Cached objects, of one namespace when given. */
  list(namespace?: string): T[] {
    const all = [...this.store.values()];
    return namespace === undefined ? all : all.filter((o) => o.metadata.namespace === namespace);
  }

  /** Adds a secondary index (may be called before or after start). */
  addIndex(name: string, fn: IndexFunction<T>): void {
    this.indexer.addIndex(name, fn, this.store.entries());
  }

  /** Cached objects indexed under `value` in index `name`. */
  byIndex(name: string, value: string): T[] {
    return this.indexer.keys(name, value).flatMap((k) => {
      const obj = this.store.get(k);
      return obj === undefined ? [] : [obj];
    });
  }

  stats(): Readonly<InformerStats> {
    return { ...this.counters };
  }

  /** What the cache keeps of an object fresh off the wire. */
  private shape(obj: T): T {
    const transform = this.options.transform;
    return transform === undefined ? withoutManagedFields(obj) : transform(withoutManagedFields(obj));
  }

  private releaseSyncWaiters(): void {
    for (const resolve of this.syncWaiters.splice(0)) resolve();
  }

  /** List + watch until the signal aborts, the cache re-announced on its period meanwhile. */
  private async run(signal: AbortSignal): Promise<void> {
    const stopResync = this.resyncEvery(this.options.resyncIntervalMs ?? defaultResyncIntervalMs);
    try {
      await this.listAndWatch(signal);
    } finally {
      stopResync();
    }
  }

  private async listAndWatch(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff({ initialMs: this.options.backoff?.initialMs ?? 1000, maxMs: this.options.backoff?.maxMs ?? 30_000 });
    const relistIntervalMs = this.options.relistIntervalMs ?? Infinity;
    let resourceVersion: string | undefined;
    let relistAt = 0;
    while (!signal.aborted) {
      try {
        if (resourceVersion === undefined || this.clock.monotonic() >= relistAt) {
          resourceVersion = await this.relist(signal);
          if (signal.aborted) return;
          relistAt = this.clock.monotonic() + relistIntervalMs;
        }
        const startedAt = this.clock.monotonic();
        const outcome = await this.watchOnce({ signal, resourceVersion, relistAt });
        resourceVersion = outcome.resourceVersion;
        if (outcome.end === 'aborted') return;
        if (outcome.end === 'relist') relistAt = 0;
        this.countRestart(outcome.end);
        if (outcome.delivered > 0) backoff.reset();
        // A server that closes watches at once must not make us spin.
        if (outcome.end === 'closed' && outcome.delivered === 0 && this.clock.monotonic() - startedAt < 1000) {
          await sleep({ delayMs: backoff.next(), signal, clock: this.clock });
        }
      } catch (err: unknown) {
        if (signal.aborted) return;
        if (isGone(err)) {
          this.counters.gone += 1;
          this.countRestart('gone');
          this.logger.info('resourceVersion too old, relisting', { resourceVersion });
          resourceVersion = undefined;
          continue;
        }
        this.counters.errors += 1;
        this.failingSince ??= this.clock.monotonic();
        const delayMs = backoff.next();
        this.countRestart('error');
        this.logger.warn('list or watch failed, retrying', { err: errorFields(err), delayMs, synced: this.synced });
        await sleep({ delayMs, signal, clock: this.clock });
      }
    }
  }

  /** Re-announces the cache every `intervalMs` once synced; returns what stops it. */
  private resyncEvery(intervalMs: number): () => void {
    let cancel = (): void => undefined;
    const tick = (): void => {
      if (this.synced) for (const object of [...this.store.values()]) this.dispatch({ type: 'resync', object });
      cancel = this.clock.schedule(tick, intervalMs);
    };
    cancel = this.clock.schedule(tick, intervalMs);
    return () => cancel();
  }

  private countRestart(reason: Exclude<WatchEnd, 'aborted'> | 'gone' | 'error'): void {
    this.counters.restarts += 1;
    if (reason === 'watchdog') this.counters.watchdogFirings += 1;
    this.options.metrics?.informerRestarts.inc({ resource: this.resourceName, reason });
    this.logger.debug('restarting watch', { reason });
  }

  /** Lists everything, replaces the cache with it, emits the differences; returns the list's version. */
  private async relist(signal: AbortSignal): Promise<string> {
    const result = await this.options.client.list<T>(this.options.type, {
      ...(this.options.namespace !== undefined ? { namespace: this.options.namespace } : {}),
      ...(this.options.labelSelector !== undefined ? { labelSelector: this.options.labelSelector } : {}),
      ...(this.options.fieldSelector !== undefined ? { fieldSelector: this.options.fieldSelector } : {}),
      ...(this.options.pageSize !== undefined ? { limit: this.options.pageSize } : {}),
      signal,
      // An unchanged object (same resourceVersion) is the one cached: the fresh copy is dropped
      // while young instead of a whole second cache living until the last page (replaceAll keeps
      // the cached instance for those anyway).
      mapItem: (item) => {
        const cached = this.store.get(cacheKey(item));
        if (cached !== undefined && cached.metadata.resourceVersion === item.metadata.resourceVersion) return cached;
        return this.shape(item);
      },
    });
    if (signal.aborted) return result.resourceVersion;
    const firstList = !this.synced;
    this.failingSince = undefined;
    const changes = replaceAll(this.store, result.items, (obj) => this.keyOf(obj));
    this.counters.lists += 1;
    if (!firstList) this.counters.relists += 1;
    this.options.metrics?.informerLists.inc({ resource: this.resourceName });
    this.logger.debug('listed', { count: result.items.length, changes: changes.length, resourceVersion: result.resourceVersion });
    for (const change of changes) this.dispatch(change);
    if (firstList) {
      this.synced = true;
      this.logger.debug('cache synced', { count: this.store.size });
      this.releaseSyncWaiters();
    }
    return result.resourceVersion;
  }

  /**
   * Runs one watch until it closes, fails, goes silent past the watchdog, reaches the relist
   * time or the signal aborts. The request is aborted and finished before this returns.
   */
  private async watchOnce(options: { signal: AbortSignal; resourceVersion: string; relistAt: number }): Promise<{
    end: WatchEnd;
    resourceVersion: string;
    delivered: number;
  }> {
    const { signal } = options;
    const request = new AbortController();
    let end: WatchEnd = 'closed';
    let resourceVersion = options.resourceVersion;
    let delivered = 0;
    let failure: KubeApiError | undefined;
    const stop = (why: WatchEnd): void => {
      if (request.signal.aborted) return;
      end = why;
      request.abort();
    };
    const onAbort = (): void => stop('aborted');
    signal.addEventListener('abort', onAbort, { once: true });
    const watchdogMs = this.options.watchdogMs ?? defaultWatchdogMs;
    let cancelWatchdog = this.clock.schedule(() => stop('watchdog'), watchdogMs);
    // Never a timer for Infinity: Node runs a delay beyond 2^31 - 1 ms after 1 ms.
    const cancelRelist = Number.isFinite(options.relistAt)
      ? this.clock.schedule(() => stop('relist'), Math.max(0, options.relistAt - this.clock.monotonic()))
      : () => undefined;
    const onEvent = (event: WatchEvent<T>): void => {
      if (request.signal.aborted) return;
      this.failingSince = undefined;
      cancelWatchdog();
      cancelWatchdog = this.clock.schedule(() => stop('watchdog'), watchdogMs);
      switch (event.type) {
        case 'BOOKMARK':
          resourceVersion = event.resourceVersion;
          return;
        case 'ERROR':
          failure = event.error;
          stop('closed');
          return;
        case 'ADDED':
        case 'MODIFIED':
        case 'DELETED': {
          delivered += 1;
          this.counters.events += 1;
          resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
          const change = applyWatchEvent(this.store, { ...event, object: this.shape(event.object) }, (obj) => this.keyOf(obj));
          if (change !== undefined) this.dispatch(change);
          return;
        }
      }
    };
    this.counters.watches += 1;
    let broken: unknown;
    try {
      await this.options.client.watch<T>(
        this.options.type,
        {
          ...(this.options.namespace !== undefined ? { namespace: this.options.namespace } : {}),
          ...(this.options.labelSelector !== undefined ? { labelSelector: this.options.labelSelector } : {}),
          ...(this.options.fieldSelector !== undefined ? { fieldSelector: this.options.fieldSelector } : {}),
          resourceVersion,
          allowWatchBookmarks: true,
          timeoutSeconds: this.options.watchTimeoutSeconds ?? Math.round(300 + Math.random() * 300),
          signal: request.signal,
          onOpen: () => {
            this.failingSince = undefined;
          },
        },
        onEvent,
      );
    } catch (err: unknown) {
      broken = err;
    } finally {
      cancelWatchdog();
      cancelRelist();
      signal.removeEventListener('abort', onAbort);
      request.abort();
    }
    if (failure !== undefined) throw failure;
    // A connection that broke after delivering events (the API server drops a watcher it thinks
    // is too slow) made progress: resume from the last version seen, at once, instead of backing
    // off and replaying what was already applied (a bigger replay overflows the server's buffer
    // again and ends in a 410 and a full relist).
    if (broken !== undefined && (delivered === 0 || isGone(broken)))
      throw broken instanceof Error ? broken : new Error('watch failed', { cause: broken });
    return { end: signal.aborted ? 'aborted' : end, resourceVersion, delivered };
  }

  /** The object's cache key: the string its cached version has when there is one (see `keys`). */
  keyOf(obj: T): string {
    let key = this.keys.get(obj);
    if (key !== undefined) return key;
    key = cacheKey(obj);
    const cached = this.store.get(key);
    key = (cached === undefined ? undefined : this.keys.get(cached)) ?? key;
    this.keys.set(obj, key);
    return key;
  }

  private dispatch(change: CacheEvent<T>): void {
    const key = this.keyOf(change.object);
    this.indexer.update(key, change.type === 'delete' ? undefined : change.object);
    const calls: (() => void)[] =
      change.type === 'update'
        ? this.handlers.update.map((h) => () => h(change.oldObject, change.object))
        : this.handlers[change.type].map((h) => () => h(change.object));
    for (const call of calls) {
      try {
        call();
      } catch (err: unknown) {
        // A handler's bug must not stop the cache or the other handlers.
        this.logger.error('informer handler threw', { event: change.type, key, err: errorFields(err) });
      }
    }
  }
}
