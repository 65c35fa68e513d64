import { describe, expect, jest, test } from '@jest/globals';
import { realClock, type Cancel, type Clock } from '../clock.js';
import { BucketRateLimiter, ItemExponentialRateLimiter, MaxOfRateLimiter } from './rate-limiter.js';
import { WorkQueue } from './work-queue.js';

/** Time that moves only when the test says so. */
class FakeClock implements Clock {
  private time = 1_000_000;
  private timers: { at: number; callback: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.time;
  }

  monotonic(): number {
    return this.time;
  }

  schedule(callback: () => void, delayMs: number): Cancel {
    const timer = { at: this.time + delayMs, callback, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.time = due.at;
      due.cancelled = true;
      due.callback();
    }
    this.time = end;
    this.timers = this.timers.filter((t) => !t.cancelled);
  }

  pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}

function newQueue(clock = new FakeClock()): { queue: WorkQueue; clock: FakeClock } {
  return { queue: new WorkQueue({ clock, rateLimiter: new ItemExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 1000 }) }), clock };
}

describe('WorkQueue', () => {
  test('a key added several times before it is taken is handed out once', async () => {
    const { queue } = newQueue();
    queue.add('ns/a');
    queue.add('ns/b');
    queue.add('ns/a');
    expect(queue.len()).toBe(2);
    expect(await queue.get()).toBe('ns/a');
    expect(await queue.get()).toBe('ns/b');
    expect(queue.len()).toBe(0);
  });

  test('a key added while it is processed is handed out again only after done', async () => {
    const { queue } = newQueue();
    queue.add('ns/a');
    const first = await queue.get();
    expect(first).toBe('ns/a');

    queue.add('ns/a');
    expect(queue.len()).toBe(0);
    let second: string | undefined;
    const next = queue.get().then((k) => {
      second = k;
    });
    await Promise.resolve();
    expect(second).toBeUndefined();

    queue.done('ns/a');
    await next;
    expect(second).toBe('ns/a');
    queue.done('ns/a');
    expect(queue.len()).toBe(0);
  });

  test('two workers never hold the same key at once', async () => {
    const { queue } = newQueue();
    const holding = new Set<string>();
    const overlaps: string[] = [];
    let processed = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        const key = await queue.get();
        if (key === undefined) return;
        if (holding.has(key)) overlaps.push(key);
        holding.add(key);
        // Re-add while holding it, and yield so the other worker gets a turn.
        if (processed < 50) queue.add(key);
        await new Promise((resolve) => setImmediate(resolve));
        holding.delete(key);
        processed += 1;
        queue.done(key);
        if (processed >= 50 && holding.size === 0 && queue.len() === 0) queue.shutDown();
      }
    };
    queue.add('ns/a');
    queue.add('ns/b');
    await Promise.all([worker(), worker(), worker()]);
    expect(overlaps).toEqual([]);
    expect(processed).toBeGreaterThanOrEqual(50);
  });

  test('get waits for an add', async () => {
    const { queue } = newQueue();
    const got = queue.get();
    queue.add('x');
    await expect(got).resolves.toBe('x');
  });

  test('addAfter hands the key out when its delay passed, and the earliest delay wins', async () => {
    const { queue, clock } = newQueue();
    queue.addAfter('ns/a', 1000);
    queue.addAfter('ns/a', 300);
    queue.addAfter('ns/a', 2000);
    expect(queue.len()).toBe(0);
    expect(queue.waitingLen()).toBe(1);
    clock.advance(299);
    expect(queue.len()).toBe(0);
    clock.advance(1);
    expect(queue.len()).toBe(1);
    expect(await queue.get()).toBe('ns/a');
    queue.done('ns/a');
    clock.advance(5000);
    expect(queue.len()).toBe(0);
  });

  test('addAfter with no delay adds at once', () => {
    const { queue } = newQueue();
    queue.addAfter('a', 0);
    expect(queue.len()).toBe(1);
  });

  test('addRateLimited backs off exponentially per key until forget', async () => {
    const { queue, clock } = newQueue();
    const delays: number[] = [];
    for (let i = 0; i < 10; i++) {
      const before = clock.now();
      queue.addRateLimited('ns/a');
      for (let waited = 0; queue.len() === 0 && waited < 10_000; waited++) clock.advance(1);
      delays.push(clock.now() - before);
      const key = await queue.get();
      expect(key).toBe('ns/a');
      queue.done('ns/a');
    }
    expect(delays).toEqual([5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
    expect(queue.numRequeues('ns/a')).toBe(10);
    queue.forget('ns/a');
    expect(queue.numRequeues('ns/a')).toBe(0);
  });

  test('shutDown resolves waiting getters with undefined and cancels timers', async () => {
    const { queue, clock } = newQueue();
    const waiting = queue.get();
    queue.addAfter('later', 100);
    expect(clock.pending()).toBe(1);
    queue.shutDown();
    await expect(waiting).resolves.toBeUndefined();
    await expect(queue.get()).resolves.toBeUndefined();
    expect(clock.pending()).toBe(0);
    queue.add('ignored');
    expect(queue.len()).toBe(0);
  });

  test('reports its depth to hooks', async () => {
    const depths: number[] = [];
    const queue = new WorkQueue({ clock: new FakeClock(), hooks: { onDepth: (d) => depths.push(d) } });
    queue.add('a');
    queue.add('b');
    await queue.get();
    expect(depths).toEqual([1, 2, 1]);
  });

  test('works with jest fake timers through the real clock', async () => {
    jest.useFakeTimers();
    try {
      const queue = new WorkQueue({ clock: realClock });
      queue.addAfter('k', 250);
      await jest.advanceTimersByTimeAsync(249);
      expect(queue.len()).toBe(0);
      await jest.advanceTimersByTimeAsync(1);
      expect(queue.len()).toBe(1);
      queue.shutDown();
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('rate limiters', () => {
  test('the exponential limiter caps at its maximum', () => {
    const limiter = new ItemExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 300_000 });
    const delays = Array.from({ length: 30 }, () => limiter.when('k'));
    expect(delays.slice(0, 3)).toEqual([5, 10, 20]);
    expect(delays.at(-1)).toBe(300_000);
    expect(limiter.when('other')).toBe(5);
  });

  test('the bucket allows a burst, then spaces reservations at its rate', () => {
    const clock = new FakeClock();
    const bucket = new BucketRateLimiter({ qps: 10, burst: 3, clock });
    expect([bucket.when('a'), bucket.when('b'), bucket.when('c')]).toEqual([0, 0, 0]);
    expect(bucket.when('d')).toBe(100);
    expect(bucket.when('e')).toBe(200);
    clock.advance(1000);
    expect(bucket.when('f')).toBe(0);
  });

  test('max-of takes the longest delay', () => {
    const clock = new FakeClock();
    const limiter = new MaxOfRateLimiter([
      new ItemExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 1000 }),
      new BucketRateLimiter({ qps: 1, burst: 1, clock }),
    ]);
    expect(limiter.when('a')).toBe(5);
    expect(limiter.when('b')).toBe(1000);
    expect(limiter.numRequeues('a')).toBe(1);
  });
});
