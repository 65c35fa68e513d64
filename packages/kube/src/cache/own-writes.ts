import type { KubeObject } from '../resource.js';

/**
 * Read-your-own-writes over an informer cache: the one overlay every controller here uses (the
 * IPAM provider's pools, blocks, claims and IPAddresses; the network controller's MachineNetworks).
 *
 * The cache shows our own writes only after their watch events arrive, and during a burst it lags
 * by seconds (tens of seconds with 10,000 claims on a saturated API server). A pass that started
 * from the cache's version would send its guarded write against a version we already replaced,
 * lose with 409, read the object again and decide again; or send a write identical to one that
 * already succeeded; and every echo of our writes would wake another pass.
 *
 * One rule answers all three. For each object this keeps the versions that are ours: those our
 * writes were based on and those they produced. Every write recorded here was guarded by the
 * version it replaced (or was a create), so it holds everything that version held: while the cache
 * shows one of our versions, it has not seen (all of) our writes, and ours is the newer state.
 * Once the cache shows any other version, someone else wrote and the cache is trusted again.
 * Correctness never rests on this (each write stays guarded); it saves the wasted writes and
 * passes. Three uses of the same versions:
 * - `remember`/`fresher`/`unseen`: the object as we wrote it, over the cache's older copy;
 * - `wrote`/`alreadyWrote`: a write whose result we do not keep (a claim's finalizer or status,
 *   an IPAddress created), skipped when the same one succeeded and the cache still shows ours;
 * - `writing`/`isEcho`: a watch event that is our own write coming back (a version one of our
 *   writes produced, or any while a write is in flight: its event can come before its answer);
 *   `sending`/`lastSent` for a caller that recognises its echo by content.
 *
 * Objects are kept by `group` (the objects a pass lists together, e.g. a pool's blocks under its
 * UID; '' for objects looked up one by one) and `name`. With `ttlMs` entries expire that long
 * after their last write (writes that are never forgotten one by one: a burst's claims); without
 * it they stay until the cache shows another version or the caller forgets them.
 */
export class OwnWrites<T extends KubeObject> {
  private readonly entries = new Map<string, Map<string, Entry<T>>>();
  /** How many writes of ours each object has in flight. */
  private readonly inFlight = new Map<string, number>();
  /** The object as the last write recorded with `sending` left it. */
  private readonly sent = new Map<string, T>();
  private readonly ttlMs: number;
  private readonly nowMs: () => number;

  constructor(options: { readonly ttlMs?: number; readonly nowMs?: () => number } = {}) {
    this.ttlMs = options.ttlMs ?? Infinity;
    this.nowMs = options.nowMs ?? Date.now;
  }

  /**
   * Records `written` (as the server answered a write guarded by `basedOn`; undefined for a
   * create) under `group` and `name`. Returns what is kept (without managedFields, as the cache
   * has objects), for the caller to use.
   */
  remember(group: string, name: string, write: { readonly basedOn: string | undefined; readonly written: T }): T {
    const kept = withoutManagedFields(write.written);
    this.record(group, name, { basedOn: write.basedOn, produced: kept.metadata.resourceVersion, written: kept });
    return kept;
  }

  /**
   * Records a write whose result is not kept: `value` says what it wrote under `what` (a write of
   * the same `what` again is skipped while alreadyWrote says so).
   */
  wrote(
    group: string,
    name: string,
    write: { readonly what: string; readonly value: string; readonly basedOn: string | undefined; readonly produced: string | undefined },
  ): void {
    const entry = this.record(group, name, { basedOn: write.basedOn, produced: write.produced, written: undefined });
    (entry.values ??= {})[write.what] = write.value;
  }

  /**
   * Whether `value` was written under `what` and the cache still shows one of our versions of the
   * object (`cachedVersion`: the cache's; undefined for an object the cache does not have yet).
   */
  alreadyWrote(
    group: string,
    name: string,
    write: { readonly what: string; readonly value: string; readonly cachedVersion: string | undefined },
  ): boolean {
    const entry = this.entries.get(group)?.get(name);
    const written = entry?.values?.[write.what];
    if (entry === undefined || written === undefined) return false;
    if (entry.expiresAt <= this.nowMs() || !entry.ours.includes(write.cachedVersion)) {
      if (entry.values !== undefined) entry.values[write.what] = undefined;
      return false;
    }
    return written === write.value;
  }

  /**
   * The newer of the cache's object and ours: ours while the cache shows a version ours replaced,
   * or ours itself (the same version, decoded once); the cache's otherwise. `cached` undefined: ours
   * until the cache has shown it once (a create it has not seen yet), then nothing (deleted).
   */
  fresher(group: string, name: string, cached: T | undefined): T | undefined {
    const entry = this.entries.get(group)?.get(name);
    const written = entry?.written;
    if (entry === undefined || written === undefined) return cached;
    if (cached === undefined) {
      if (!entry.seen) return written;
      this.drop(group, name);
      return undefined;
    }
    const version = cached.metadata.resourceVersion;
    if (cached.metadata.uid === written.metadata.uid) {
      if (version === written.metadata.resourceVersion) {
        entry.seen = true;
        return written;
      }
      if (entry.ours.includes(version)) return written;
    }
    this.drop(group, name);
    return cached;
  }

  /** Our objects of `group` the cache does not list (created, its watch event not arrived yet). */
  unseen(group: string, listed: ReadonlySet<string>): T[] {
    const byName = this.entries.get(group);
    if (byName === undefined) return [];
    const found: T[] = [];
    for (const [name, e] of byName) if (e.written !== undefined && !e.seen && !listed.has(name)) found.push(e.written);
    return found;
  }

  /**
   * Sends `write` to the object, counted as in flight until its answer is in: the write's watch
   * event can reach the cache before its answer reaches us (before it is recorded).
   */
  async writing<R>(group: string, name: string, write: () => Promise<R>): Promise<R> {
    const id = objectId(group, name);
    this.inFlight.set(id, (this.inFlight.get(id) ?? 0) + 1);
    try {
      return await write();
    } finally {
      const left = (this.inFlight.get(id) ?? 1) - 1;
      if (left > 0) this.inFlight.set(id, left);
      else this.inFlight.delete(id);
    }
  }

  /** Records the object as the write about to be sent leaves it, as its last sent (lastSent) until forgotten. */
  sending(group: string, name: string, object: T): void {
    this.sent.set(objectId(group, name), object);
  }

  /**
   * Whether a watch event showing `version` of the object is the echo of a write of ours: a
   * version one of our writes produced (and not expired), or any while a write of ours to the
   * object is in flight (the caller checks that the change is one our writes make).
   */
  isEcho(group: string, name: string, version: string | undefined): boolean {
    if (this.inFlight.has(objectId(group, name))) return true;
    if (version === undefined) return false;
    const entry = this.entries.get(group)?.get(name);
    return entry !== undefined && entry.expiresAt > this.nowMs() && entry.produced.includes(version);
  }

  /**
   * What the object's last write recorded with `sending` sent: for a caller whose other writes to the same
   * object must still wake passes (isEcho would take theirs too), an echo is recognised by content
   * instead, whether it comes before the write's answer or after.
   */
  lastSent(group: string, name: string): T | undefined {
    return this.sent.get(objectId(group, name));
  }

  forget(group: string, name?: string): void {
    if (name === undefined) this.entries.delete(group);
    else {
      this.drop(group, name);
      this.sent.delete(objectId(group, name));
    }
  }

  /**
   * Drops what wrote recorded of the object (its next write is sent whatever the cache shows), but
   * not its versions: the echoes of writes already sent are still recognised.
   */
  forgetWrites(group: string, name: string): void {
    const entry = this.entries.get(group)?.get(name);
    if (entry !== undefined) entry.values = undefined;
  }

  /** Entries kept: bounded by the objects written within one time to live. */
  size(): number {
    let n = 0;
    for (const byName of this.entries.values()) n += byName.size;
    return n;
  }

  private record(
    group: string,
    name: string,
    write: { basedOn: string | undefined; produced: string | undefined; written: T | undefined },
  ): Entry<T> {
    const now = this.nowMs();
    if (this.ttlMs !== Infinity) this.dropExpired(now);
    let byName = this.entries.get(group);
    if (byName === undefined) this.entries.set(group, (byName = new Map<string, Entry<T>>()));
    const previous = byName.get(name);
    // Versions the cache has not shown yet stay ours; once it showed our object, only the base
    // counts (it never goes back). A recreated object (another uid) starts anew.
    const chain =
      previous !== undefined &&
      !previous.seen &&
      (previous.written === undefined || write.written === undefined || previous.written.metadata.uid === write.written.metadata.uid);
    const entry: Entry<T> = {
      // A write not kept leaves no object to show: ours would be older than what it produced.
      written: write.written,
      ours: chain ? previous.ours : [],
      produced: chain ? previous.produced : [],
      values: chain ? previous.values : undefined,
      seen: false,
      expiresAt: now + this.ttlMs,
    };
    addOnce(entry.ours, write.basedOn);
    if (write.produced !== undefined) {
      addOnce(entry.ours, write.produced);
      addOnce(entry.produced, write.produced);
    }
    // Deleted and set again, so each group stays in expiry order (one time to live for all).
    byName.delete(name);
    byName.set(name, entry);
    return entry;
  }

  /**
   * Drops the expired entries from the front of each group (they are in expiry order), stopping
   * at the first live one: a constant cost per write on average. Sweeping whole maps once they
   * were large cost a third of the controller's CPU in the fill bench (22,000 bound claims).
   */
  private dropExpired(now: number): void {
    for (const [group, byName] of this.entries) {
      for (const [name, e] of byName) {
        if (e.expiresAt > now) break;
        byName.delete(name);
      }
      if (byName.size === 0) this.entries.delete(group);
    }
  }

  private drop(group: string, name: string): void {
    const byName = this.entries.get(group);
    byName?.delete(name);
    if (byName?.size === 0) this.entries.delete(group);
  }
}

interface Entry<T> {
  /** The object as our last write left it; undefined for writes whose result is not kept. */
  readonly written: T | undefined;
  /**
   * Versions our writes replaced or produced: a cache showing one is not ahead of ours. Arrays, not
   * Sets: an object has a handful of versions of ours, and a /16's burst keeps 65,000 entries.
   */
  readonly ours: (string | undefined)[];
  /** Versions our writes produced: a watch event showing one is our echo. */
  readonly produced: string[];
  /**
   * What each kind of write not kept sent last (wrote/alreadyWrote): a plain object, not a Map (a
   * Map costs about 100 bytes more, and a burst keeps one of these for every claim).
   */
  values: Record<string, string | undefined> | undefined;
  /** The cache has shown our version once. */
  seen: boolean;
  readonly expiresAt: number;
}

function objectId(group: string, name: string): string {
  return group === '' ? name : `${group}\u0000${name}`;
}

function addOnce<V>(list: V[], value: V): void {
  if (!list.includes(value)) list.push(value);
}

/** The informer cache drops managedFields; ours are kept in the same shape. */
function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _managedFields, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}
