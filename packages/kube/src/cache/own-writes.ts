import type { KubeObject } from '../resource.js';

/**
 * Read-your-own-writes over an informer cache, the one overlay every controller here uses (the
 * IPAM provider's pools and blocks, the network controller's MachineNetworks).
 *
 * The objects this process wrote last (pools, blocks), for the pass that starts before the
 * informer cache has them. During a burst one pass follows the other faster than our own watch
 * events come back: a pass that started from the cache's version would send its guarded write
 * against a version we already replaced, lose with 409, read the object again and decide again
 * (a wasted write, a read and a whole pass). Every write kept here was guarded by the version it
 * replaced, so it holds everything that version held: while the cache shows that version (or
 * ours), ours is the newer one. Once the cache shows any other version, someone else wrote and the
 * cache is trusted again. Correctness never rests on this: each write stays guarded.
 */
export class OwnWrites<T extends KubeObject> {
  private readonly entries = new Map<string, Map<string, Entry<T>>>();

  /**
   * Records `written` (as the server answered a write guarded by `basedOn`; undefined for a
   * create) under `group` (a pool's UID for its blocks, the pool's key for a pool) and `name`.
   * Returns what is kept (without managedFields, as the cache has objects), for the caller to use.
   */
  remember(group: string, name: string, write: { readonly basedOn: string | undefined; readonly written: T }): T {
    const { basedOn, written } = write;
    let byName = this.entries.get(group);
    if (byName === undefined) this.entries.set(group, (byName = new Map<string, Entry<T>>()));
    const previous = byName.get(name);
    // Versions the cache has not shown yet stay replaced; once it showed ours, only the base counts.
    const chain = previous !== undefined && !previous.seen && previous.written.metadata.uid === written.metadata.uid;
    const replaced = new Set(chain ? previous.replaced : []);
    if (basedOn !== undefined) replaced.add(basedOn);
    if (chain) replaced.add(previous.written.metadata.resourceVersion ?? '');
    const kept = withoutManagedFields(written);
    byName.set(name, { written: kept, replaced, seen: false });
    return kept;
  }

  /**
   * The newer of the cache's object and ours: ours while the cache shows a version ours replaced,
   * or ours itself (the same version, decoded once); the cache's otherwise. `cached` undefined: ours
   * until the cache has shown it once (a create it has not seen yet), then nothing (deleted).
   */
  fresher(group: string, name: string, cached: T | undefined): T | undefined {
    const byName = this.entries.get(group);
    const entry = byName?.get(name);
    if (byName === undefined || entry === undefined) return cached;
    if (cached === undefined) {
      if (!entry.seen) return entry.written;
      this.drop(group, name);
      return undefined;
    }
    const version = cached.metadata.resourceVersion ?? '';
    if (cached.metadata.uid === entry.written.metadata.uid) {
      if (version === entry.written.metadata.resourceVersion) {
        entry.seen = true;
        return entry.written;
      }
      if (entry.replaced.has(version)) return entry.written;
    }
    this.drop(group, name);
    return cached;
  }

  /** Our objects of `group` the cache does not list (created, its watch event not arrived yet). */
  unseen(group: string, listed: ReadonlySet<string>): T[] {
    const byName = this.entries.get(group);
    if (byName === undefined) return [];
    return [...byName].filter(([name, e]) => !listed.has(name) && !e.seen).map(([, e]) => e.written);
  }

  forget(group: string, name?: string): void {
    if (name === undefined) this.entries.delete(group);
    else this.drop(group, name);
  }

  private drop(group: string, name: string): void {
    const byName = this.entries.get(group);
    byName?.delete(name);
    if (byName?.size === 0) this.entries.delete(group);
  }
}

interface Entry<T> {
  readonly written: T;
  /** Versions our writes replaced: a cache showing one of them is behind ours. */
  readonly replaced: ReadonlySet<string>;
  /** The cache has shown our version once. */
  seen: boolean;
}

/** The informer cache drops managedFields; ours are kept in the same shape. */
function withoutManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _managedFields, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}
