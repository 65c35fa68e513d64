import { randomUUID } from 'node:crypto';
import type { Informer, InformerEventName, InformerHandle } from '../cache/informer.js';
import type { CacheEvent } from '../cache/store.js';
import { realClock, type Clock } from '../clock.js';
import { isConflict, isTerminalError } from '../errors.js';
import { errorFields, type Logger } from '../log.js';
import type { RuntimeMetrics } from '../metrics.js';
import type { RateLimiter } from '../queue/rate-limiter.js';
import { WorkQueue } from '../queue/work-queue.js';
import { keyOf, keyString, parseKey, type KubeObject, type ObjectKey } from '../resource.js';
import type { ReconcileResult, Reconciler } from './result.js';

/** Maps an event on a watched kind to the keys to reconcile (possibly of another kind). */
export type EventMapper<T extends KubeObject> = (obj: T, event: InformerEventName) => readonly ObjectKey[];

export interface ControllerWatchOptions<T extends KubeObject> {
  /** Drops events before they reach the queue (e.g. only spec changes: compare generations). */
  readonly predicate?: (event: CacheEvent<T>) => boolean;
  /** Enqueue on the informer's periodic resync too (default true: level-based safety net). */
  readonly resync?: boolean;
}

export interface ControllerOptions {
  /** Names the controller in logs and metrics (e.g. "ipaddressclaim"). */
  readonly name: string;
  readonly reconciler: Reconciler;
  /** How many keys are reconciled at once (never the same key twice). Default 1. */
  readonly concurrency?: number;
  readonly logger: Logger;
  readonly metrics?: RuntimeMetrics;
  readonly rateLimiter?: RateLimiter;
  readonly clock?: Clock;
  /**
   * How long one reconcile may run before its signal aborts (it then fails and retries with
   * backoff): a hung call cannot hold a worker for minutes. Default DEFAULT_RECONCILE_TIMEOUT_MS.
   */
  readonly reconcileTimeoutMs?: number;
}

/** Default deadline of one reconcile (a controller may set its own; flag --reconcile-timeout-seconds). */
export const DEFAULT_RECONCILE_TIMEOUT_MS = 300_000;

/** Retries logged at warn before they are logged at error (a human probably has to look). */
const quietRetries = 5;

/**
 * Runs a Reconciler: informer events become keys in a de-duplicating, rate-limited work queue,
 * and N workers reconcile them. Each (result, error) pair turns into exactly one queue action
 * and one metric: done → forget; requeueAfter → forget and add after the delay; error → retry
 * with per-key exponential backoff; TerminalError → log, count, forget.
 */
export class Controller {
  readonly name: string;
  private readonly queue: WorkQueue;
  private readonly watched: InformerHandle[] = [];
  private readonly logger: Logger;
  private started = false;

  constructor(private readonly options: ControllerOptions) {
    this.name = options.name;
    this.logger = options.logger.child({ controller: options.name });
    const metrics = options.metrics;
    const labels = { name: options.name };
    this.queue = new WorkQueue({
      clock: options.clock ?? realClock,
      ...(options.rateLimiter !== undefined ? { rateLimiter: options.rateLimiter } : {}),
      hooks: {
        onDepth: (depth) => metrics?.queueDepth.set(labels, depth),
        onAdd: () => metrics?.queueAdds.inc(labels),
        onRetry: () => metrics?.queueRetries.inc(labels),
      },
    });
  }

  enqueue(key: ObjectKey | string): void {
    this.queue.add(typeof key === 'string' ? key : keyString(key));
  }

  enqueueAfter(key: ObjectKey | string, delayMs: number): void {
    this.queue.addAfter(typeof key === 'string' ? key : keyString(key), delayMs);
  }

  /**
   * Reconciles keys derived from `informer`'s events: by default the object's own key; with
   * `map`, any keys (a pool gains free space → its waiting claims). On update both the old and
   * the new object are mapped. Call before start(); start() waits for the informer's sync.
   */
  watch<T extends KubeObject>(informer: Informer<T>, map?: EventMapper<T>, options: ControllerWatchOptions<T> = {}): void {
    const toKeys: EventMapper<T> = map ?? ((obj) => [keyOf(obj)]);
    const handle = (event: CacheEvent<T>): void => {
      if (options.predicate !== undefined && !options.predicate(event)) return;
      const objects = event.type === 'update' ? [event.oldObject, event.object] : [event.object];
      // Once per key: an idle worker takes a key the moment it is added, so a second add of the
      // same key (old and new object mapping alike) would run a second, useless reconcile after it.
      const keys = new Set<string>();
      for (const obj of objects) for (const key of toKeys(obj, event.type)) keys.add(keyString(key));
      for (const key of keys) this.enqueue(key);
    };
    informer.on('add', (object) => handle({ type: 'add', object }));
    informer.on('update', (oldObject, object) => handle({ type: 'update', oldObject, object }));
    informer.on('delete', (object) => handle({ type: 'delete', object }));
    if (options.resync ?? true) informer.on('resync', (object) => handle({ type: 'resync', object }));
    if (!this.watched.includes(informer)) this.watched.push(informer);
  }

  /** The informers this controller watches (the manager starts them independently of leadership). */
  informers(): readonly InformerHandle[] {
    return this.watched;
  }

  /** Keys waiting to be reconciled (not counting those in progress or delayed). */
  queueLength(): number {
    return this.queue.len();
  }

  /**
   * Starts the watched informers (if nobody did), waits for their caches, then runs the workers.
   * Resolves when the signal aborted and every in-flight reconcile has returned. Call once.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error(`controller ${this.name} was already started`);
    this.started = true;
    const stop = (): void => this.queue.shutDown();
    signal.addEventListener('abort', stop, { once: true });
    try {
      await Promise.all(this.watched.map((i) => i.start(signal)));
      if (signal.aborted) return;
      const concurrency = Math.max(1, this.options.concurrency ?? 1);
      this.logger.info('starting workers', { concurrency });
      await Promise.all(Array.from({ length: concurrency }, () => this.work(signal)));
      this.logger.info('workers stopped');
    } finally {
      signal.removeEventListener('abort', stop);
      this.queue.shutDown();
    }
  }

  private async work(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.reconcileKey(key, signal);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async reconcileKey(key: string, signal: AbortSignal): Promise<void> {
    const { metrics } = this.options;
    const controller = this.name;
    const objectKey = parseKey(key);
    const reconcileID = randomUUID();
    const logger = this.logger.child({
      ...(objectKey.namespace !== undefined ? { namespace: objectKey.namespace } : {}),
      name: objectKey.name,
      reconcileID,
    });
    const clock = this.options.clock ?? realClock;
    const startedAt = clock.monotonic();
    metrics?.activeWorkers.inc({ controller });
    const timeoutMs = this.options.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
    const deadline = new AbortController();
    const cancelDeadline = clock.schedule(
      () => deadline.abort(new Error(`the reconcile of ${key} exceeded its ${timeoutMs} ms deadline`)),
      timeoutMs,
    );
    let result: ReconcileResult;
    try {
      const reconcileSignal = AbortSignal.any([signal, deadline.signal]);
      result = await this.options.reconciler.reconcile(objectKey, { logger, reconcileID, signal: reconcileSignal });
    } catch (err: unknown) {
      if (deadline.signal.aborted && !signal.aborted) logger.warn('reconcile exceeded its deadline', { timeoutMs });
      this.onError({ key, err, logger, signal });
      return;
    } finally {
      cancelDeadline();
      metrics?.activeWorkers.dec({ controller });
      metrics?.reconcileTime.observe({ controller }, (clock.monotonic() - startedAt) / 1000);
    }
    this.queue.forget(key);
    switch (result.kind) {
      case 'done':
        metrics?.reconcileTotal.inc({ controller, result: 'success' });
        logger.debug('reconciled');
        return;
      case 'requeueAfter':
        metrics?.reconcileTotal.inc({ controller, result: 'requeue_after' });
        logger.debug('reconciled, coming back later', { afterMs: result.afterMs });
        this.queue.addAfter(key, result.afterMs);
        return;
    }
  }

  private onError(options: { key: string; err: unknown; logger: Logger; signal: AbortSignal }): void {
    const { key, err, logger, signal } = options;
    const { metrics } = this.options;
    const controller = this.name;
    if (signal.aborted) {
      // Shutting down: the next leader reconciles this key again from scratch.
      logger.debug('reconcile interrupted by shutdown', { err: errorFields(err) });
      return;
    }
    if (isTerminalError(err)) {
      metrics?.reconcileTotal.inc({ controller, result: 'terminal_error' });
      metrics?.terminalReconcileErrors.inc({ controller });
      logger.error('reconcile failed terminally, not retrying', { err: errorFields(err) });
      this.queue.forget(key);
      return;
    }
    metrics?.reconcileTotal.inc({ controller, result: 'error' });
    metrics?.reconcileErrors.inc({ controller });
    const requeues = this.queue.numRequeues(key);
    const fields = { err: errorFields(err), requeues };
    if (isConflict(err) && requeues < quietRetries) logger.debug('reconcile hit a conflict, retrying', fields);
    else if (requeues < quietRetries) logger.warn('reconcile failed, retrying', fields);
    else logger.error('reconcile keeps failing, retrying', fields);
    this.queue.addRateLimited(key);
  }
}
