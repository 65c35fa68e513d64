/**
 * What this process wrote lately: the informer cache shows our own writes only after their watch
 * events arrive, and during a burst it lags by seconds (tens of seconds with 10,000 claims on a
 * saturated API server). Without this memory every pass over a pool would send the same finalizer
 * patch (409 on the stale version, then a GET and a second patch), the same status patch and the
 * same create again — the 10,000-claim bench measured about 29% of all requests wasted that way.
 *
 * For each object it keeps the resourceVersions that are ours: those our writes were based on and
 * those they produced. While the cache shows one of them, it has not yet seen (all of) our writes,
 * so a write identical to one that succeeded is skipped. Once the cache shows a version that is not
 * ours, someone else changed the object and the cache is trusted again. Entries expire after
 * `ttlMs`, which bounds memory and any surprise.
 */
export class RecentWrites {
  private readonly writes = new Map<string, { readonly value: string; readonly objectId: string; readonly expiresAt: number }>();
  // Arrays, not Sets: an object has a handful of versions of ours, and a /16's burst keeps 130,000
  // of these entries for a time to live (two Sets each cost more than the claim's cached object).
  private readonly versions = new Map<string, { readonly ours: (string | undefined)[]; readonly produced: string[]; expiresAt: number }>();

  /** Objects with a write of ours in flight, and how many. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly ttlMs = 300_000,
    private readonly nowMs: () => number = Date.now,
  ) {}

  /**
   * Whether `value` was written under `key` and the cache still shows one of our versions of the
   * object (`cachedVersion`; undefined for an object the cache does not have yet).
   */
  has(key: string, value: string, cachedVersion: string | undefined): boolean {
    const write = this.writes.get(key);
    if (write === undefined) return false;
    const versions = this.versions.get(write.objectId);
    const now = this.nowMs();
    if (write.expiresAt <= now || versions === undefined || versions.expiresAt <= now || !versions.ours.includes(cachedVersion)) {
      this.writes.delete(key);
      return false;
    }
    return write.value === value;
  }

  /**
   * Records a successful write of `value` under `key` to object `objectId`: the version the write
   * was based on (as the cache had it) and the version it produced are ours from now on.
   */
  remember(key: string, value: string, write: { objectId: string; basedOn: string | undefined; produced: string | undefined }): void {
    const now = this.nowMs();
    this.dropExpired(now);
    const expiresAt = now + this.ttlMs;
    // Deleted and set again, so each map stays in expiry order (one time to live for all).
    this.writes.delete(key);
    this.writes.set(key, { value, objectId: write.objectId, expiresAt });
    const versions = this.versions.get(write.objectId) ?? { ours: [], produced: [], expiresAt };
    addOnce(versions.ours, write.basedOn);
    if (write.produced !== undefined) {
      addOnce(versions.ours, write.produced);
      addOnce(versions.produced, write.produced);
    }
    versions.expiresAt = expiresAt;
    this.versions.delete(write.objectId);
    this.versions.set(write.objectId, versions);
  }

  /** Entries kept, both maps together: bounded by the writes of one time to live. */
  size(): number {
    return this.writes.size + this.versions.size;
  }

  /**
   * Drops the expired entries from the front of each map (they are in expiry order), stopping at
   * the first live one: a constant cost per write on average. It used to sweep both maps whole on
   * every write once they held 50,000 entries, which a pool of 22,000 bound claims reaches: a
   * third of the controller's CPU in the fill bench went there.
   */
  private dropExpired(now: number): void {
    for (const [k, e] of this.writes) {
      if (e.expiresAt > now) break;
      this.writes.delete(k);
    }
    for (const [k, e] of this.versions) {
      if (e.expiresAt > now) break;
      this.versions.delete(k);
    }
  }

  /**
   * Sends `write` to object `objectId`, counted as in flight until its answer is in: the write's
   * watch event can reach the cache before its answer reaches us (before remember runs).
   */
  async writing<T>(objectId: string, write: () => Promise<T>): Promise<T> {
    this.inFlight.set(objectId, (this.inFlight.get(objectId) ?? 0) + 1);
    try {
      return await write();
    } finally {
      const left = (this.inFlight.get(objectId) ?? 1) - 1;
      if (left > 0) this.inFlight.set(objectId, left);
      else this.inFlight.delete(objectId);
    }
  }

  /**
   * Whether a watch event showing `version` of object `objectId` is the echo of a write of ours:
   * a version one of our writes produced (and not expired), or any while a write of ours to the
   * object is in flight (the caller checks that the change is one our writes make).
   */
  isEcho(objectId: string, version: string | undefined): boolean {
    if (this.inFlight.has(objectId)) return true;
    if (version === undefined) return false;
    const versions = this.versions.get(objectId);
    return versions !== undefined && versions.expiresAt > this.nowMs() && versions.produced.includes(version);
  }

  forget(key: string): void {
    this.writes.delete(key);
  }
}

function addOnce<T>(list: T[], value: T): void {
  if (!list.includes(value)) list.push(value);
}
