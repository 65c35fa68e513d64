// Time for the simulator's state machines (device lifecycle, VLAN batches). Injectable so tests can
// move time forward explicitly instead of sleeping; the real clock is the default for the binary.

/** Cancels a scheduled task; calling it after the task ran is harmless. */
export type CancelTask = () => void;

/** What the store needs from time: the current instant and delayed tasks. */
export interface SimClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `task` once, `delayMs` from now. */
  schedule(delayMs: number, task: () => void): CancelTask;
}

/** Wall-clock time with node timers; timers are unref'd so a forgotten simulator never holds the process open. */
export class SystemClock implements SimClock {
  now(): number {
    return Date.now();
  }

  schedule(delayMs: number, task: () => void): CancelTask {
    const timer = setTimeout(task, Math.max(0, delayMs));
    timer.unref();
    return () => clearTimeout(timer);
  }
}

interface PendingTask {
  readonly dueAt: number;
  readonly order: number;
  readonly task: () => void;
  cancelled: boolean;
}

/**
 * Time that only moves when a test says so. `advance(ms)` runs every task that falls due, in due
 * order (ties in scheduling order), each one seeing `now()` equal to its due time, including tasks
 * scheduled by tasks that ran during the same advance.
 */
export class ManualClock implements SimClock {
  private current: number;
  private order = 0;
  private pending: PendingTask[] = [];

  constructor(startMs: number = Date.parse('2026-01-01T00:00:00Z')) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  schedule(delayMs: number, task: () => void): CancelTask {
    const entry: PendingTask = { dueAt: this.current + Math.max(0, delayMs), order: this.order++, task, cancelled: false };
    this.pending.push(entry);
    return () => {
      entry.cancelled = true;
    };
  }

  /** Moves time forward by `ms`, running what falls due on the way. */
  advance(ms: number): void {
    const target = this.current + Math.max(0, ms);
    for (;;) {
      const next = this.nextDue(target);
      if (next === undefined) break;
      this.pending = this.pending.filter((p) => p !== next);
      this.current = Math.max(this.current, next.dueAt);
      next.task();
    }
    this.current = target;
  }

  /** Runs everything already due without moving time (tasks scheduled with delay 0). */
  flush(): void {
    this.advance(0);
  }

  /** How many tasks are waiting; lets a test assert that nothing is left scheduled. */
  pendingCount(): number {
    return this.pending.filter((p) => !p.cancelled).length;
  }

  private nextDue(target: number): PendingTask | undefined {
    let best: PendingTask | undefined;
    for (const p of this.pending) {
      if (p.cancelled || p.dueAt > target) continue;
      if (best === undefined || p.dueAt < best.dueAt || (p.dueAt === best.dueAt && p.order < best.order)) best = p;
    }
    if (best === undefined) this.pending = this.pending.filter((p) => !p.cancelled);
    return best;
  }
}
