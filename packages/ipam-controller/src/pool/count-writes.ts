import { PoolConditionTypes, type PoolStatus } from '@metal-l2/api';
import { jsonEqual } from '@metal-l2/kube';

/**
 * How often a pool's address counts alone are written. The blocks are the record of what is
 * allocated; status.ipAddresses (and the Ready message that quotes it) are for `kubectl get` and
 * dashboards. Written on every pass, they were a second write per pass and a watch event to every
 * watcher of pools: with counts written at most once a second, a burst's passes write their blocks
 * only, and what `kubectl get` shows lags the blocks by at most this interval plus one pass (the
 * pass that holds a write back comes back when it is due).
 */
export const COUNT_WRITE_INTERVAL_MS = 1_000;

/** When each pool's status was last written, to space writes that change nothing but counts. */
export class CountWrites {
  private readonly lastWrite = new Map<string, { readonly uid: string; readonly atMs: number }>();

  constructor(readonly intervalMs = COUNT_WRITE_INTERVAL_MS) {}

  /** How long a counts-only write of this pool waits (0: write now). */
  waitMs(key: string, uid: string, nowMs: number): number {
    const last = this.lastWrite.get(key);
    if (last === undefined || last.uid !== uid) return 0;
    return Math.max(0, last.atMs + this.intervalMs - nowMs);
  }

  wrote(key: string, uid: string, nowMs: number): void {
    this.lastWrite.set(key, { uid, atMs: nowMs });
  }

  forget(key: string): void {
    this.lastWrite.delete(key);
  }
}

/**
 * Whether `after` differs from `before` in the counts only (status.ipAddresses and the Ready
 * condition's message, which quotes them): such a write may wait. A new condition status or reason,
 * a new observedGeneration, or counts a pool never had go out at once.
 */
export function changesCountsOnly(before: PoolStatus | undefined, after: PoolStatus): boolean {
  if (before?.ipAddresses === undefined || jsonEqual(before, after)) return false;
  return jsonEqual(withoutCounts(before), withoutCounts(after));
}

function withoutCounts(status: PoolStatus): Record<string, unknown> {
  const { ipAddresses: _ipAddresses, conditions, ...rest } = status;
  return {
    ...rest,
    conditions: (conditions ?? []).map((c) => (c.type === PoolConditionTypes.ready ? { ...c, message: '' } : c)),
  };
}
