import { realClock, type Cancel, type Clock } from '../clock.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';

/** Observers for metrics; the queue itself does not depend on a metrics library. */
export interface WorkQueueHooks {
  /** Called whenever the number of keys waiting to be handed out changes. */
  readonly onDepth?: (depth: number) => void;
  readonly onAdd?: () => void;
  /** Called on each addRateLimited. */
  readonly onRetry?: () => void;
}

export interface WorkQueueOptions {
  readonly clock?: Clock;
  readonly rateLimiter?: RateLimiter;
  readonly hooks?: WorkQueueHooks;
}

/** A FIFO of keys with O(1) removal from the head (Array#shift is O(n)). */
class Fifo {
  private items: string[] = [];
  private head = 0;

  push(key: string): void {
    this.items.push(key);
  }

  shift(): string | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head];
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return key;
  }

  get length(): number {
    return this.items.length - this.head;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

/**
 * A de-duplicating work queue with client-go's guarantees:
 * - a key added many times before a worker takes it is handed out once;
 * - a key is never handed to two workers at once: added while being processed, it is handed out
 *   again only after done(key);
 * - addAfter/addRateLimited delay a key (the earliest pending delay wins);
 * - after shutDown, get() resolves undefined at once, and adds are ignored.
 * Keys are strings ("namespace/name").
 */
export class WorkQueue {
  private readonly fifo = new Fifo();
  /** Keys that need processing: in the FIFO, or being processed and added again. */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly waiting = new Map<string, { readyAt: number; cancel: Cancel }>();
  private readonly getters: ((key: string | undefined) => void)[] = [];
  private shuttingDown = false;
  private readonly clock: Clock;
  private readonly rateLimiter: RateLimiter;
  private readonly hooks: WorkQueueHooks;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? realClock;
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter(this.clock);
    this.hooks = options.hooks ?? {};
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.hooks.onAdd?.();
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.fifo.push(key);
    this.handOut();
  }

  /** Adds the key after `delayMs`; a key already waiting keeps the earlier of the two times. */
  addAfter(key: string, delayMs: number): void {
    if (this.shuttingDown) return;
    if (delayMs <= 0) {
      this.add(key);
      return;
    }
    const readyAt = this.clock.monotonic() + delayMs;
    const pending = this.waiting.get(key);
    if (pending !== undefined) {
      if (pending.readyAt <= readyAt) return;
      pending.cancel();
    }
    const cancel = this.clock.schedule(() => {
      this.waiting.delete(key);
      this.add(key);
    }, delayMs);
    this.waiting.set(key, { readyAt, cancel });
  }

  /** Adds the key after its rate limiter's delay (per-key exponential backoff, overall bucket). */
  addRateLimited(key: string): void {
    if (this.shuttingDown) return;
    this.hooks.onRetry?.();
    this.addAfter(key, this.rateLimiter.when(key));
  }

  /** The key succeeded: its backoff starts over. Does not remove it from the queue. */
  forget(key: string): void {
    this.rateLimiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.rateLimiter.numRequeues(key);
  }

  /**
   * The next key to process, waiting until there is one. Resolves undefined once the queue is
   * shut down. Every key returned must be given back with done(key).
   */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.take();
    if (key !== undefined) return Promise.resolve(key);
    return new Promise((resolve) => this.getters.push(resolve));
  }

  /** Processing of `key` finished; if it was added meanwhile, it is queued again now. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) {
      this.fifo.push(key);
      this.handOut();
    }
  }

  /** Keys ready to be handed out (not counting those being processed or waiting for a delay). */
  len(): number {
    return this.fifo.length;
  }

  /** Keys waiting for a delay (addAfter / addRateLimited). */
  waitingLen(): number {
    return this.waiting.size;
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Stops handing out keys: pending get() calls resolve undefined, timers are cancelled. */
  shutDown(): void {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    for (const { cancel } of this.waiting.values()) cancel();
    this.waiting.clear();
    this.fifo.clear();
    this.dirty.clear();
    this.hooks.onDepth?.(0);
    for (const getter of this.getters.splice(0)) getter(undefined);
  }

  private take(): string | undefined {
    const key = this.fifo.shift();
    if (key === undefined) return undefined;
    this.processing.add(key);
    this.dirty.delete(key);
    this.hooks.onDepth?.(this.fifo.length);
    return key;
  }

  private handOut(): void {
    this.hooks.onDepth?.(this.fifo.length);
    while (this.getters.length > 0 && this.fifo.length > 0) {
      const getter = this.getters.shift();
      const key = this.take();
      if (getter === undefined || key === undefined) break;
      getter(key);
    }
  }
}
