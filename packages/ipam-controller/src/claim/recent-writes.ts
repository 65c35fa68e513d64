/**
 * What this process wrote lately, for a short while: the informer cache shows our own writes only
 * after their watch events arrive, and during a burst it lags by seconds. Without this memory every
 * pass over a pool would send the same finalizer patch (409 on the stale version, then a GET and a
 * second patch), the same status patch and the same create again — the 10,000-claim bench measured
 * about 29% of all requests wasted that way. An entry only suppresses a write identical to one that
 * succeeded less than `ttlMs` ago; after that the cache is trusted again.
 */
export class RecentWrites {
  private readonly entries = new Map<string, { readonly value: string; readonly expiresAt: number }>();

  constructor(
    private readonly ttlMs = 30_000,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /** Whether `value` was written under `key` within the time to live. */
  has(key: string, value: string): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    if (entry.expiresAt <= this.nowMs()) {
      this.entries.delete(key);
      return false;
    }
    return entry.value === value;
  }

  remember(key: string, value: string): void {
    const now = this.nowMs();
    // Keep the map bounded by its traffic: drop what expired whenever it grows large.
    if (this.entries.size >= 50_000) {
      for (const [k, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(k);
    }
    this.entries.set(key, { value, expiresAt: now + this.ttlMs });
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}
