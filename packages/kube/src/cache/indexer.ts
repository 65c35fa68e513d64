import type { KubeObject } from '../resource.js';

/** Maps an object to the values it is found under (e.g. a claim → its pool's key). */
export type IndexFunction<T extends KubeObject> = (obj: T) => readonly string[];

interface Index<T extends KubeObject> {
  readonly fn: IndexFunction<T>;
  readonly byValue: Map<string, Set<string>>;
  /** What each cache key is currently indexed under, to remove it on update/delete. */
  readonly byKey: Map<string, readonly string[]>;
}

/**
 * Secondary indexes over the cache: value → cache keys, kept in step with every change so a
 * lookup costs O(matches) instead of a scan of the cache.
 */
export class Indexer<T extends KubeObject> {
  private readonly indexes = new Map<string, Index<T>>();

  /** Adds an index and fills it from `current` (the cache as it is now). */
  addIndex(name: string, fn: IndexFunction<T>, current: Iterable<[string, T]>): void {
    if (this.indexes.has(name)) throw new Error(`index ${name} already exists`);
    const index: Index<T> = { fn, byValue: new Map(), byKey: new Map() };
    this.indexes.set(name, index);
    for (const [key, obj] of current) this.put(index, key, obj);
  }

  /** Re-indexes one cache key: `obj` undefined means it left the cache. */
  update(key: string, obj: T | undefined): void {
    for (const index of this.indexes.values()) {
      this.remove(index, key);
      if (obj !== undefined) this.put(index, key, obj);
    }
  }

  /** Cache keys indexed under `value`; throws for an index that was never added (a typo). */
  keys(name: string, value: string): string[] {
    const index = this.indexes.get(name);
    if (index === undefined) throw new Error(`no index named ${name}`);
    return [...(index.byValue.get(value) ?? [])];
  }

  private put(index: Index<T>, key: string, obj: T): void {
    const values = [...new Set(index.fn(obj))];
    index.byKey.set(key, values);
    for (const value of values) {
      let keys = index.byValue.get(value);
      if (keys === undefined) {
        keys = new Set();
        index.byValue.set(value, keys);
      }
      keys.add(key);
    }
  }

  private remove(index: Index<T>, key: string): void {
    for (const value of index.byKey.get(key) ?? []) {
      const keys = index.byValue.get(value);
      keys?.delete(key);
      if (keys?.size === 0) index.byValue.delete(value);
    }
    index.byKey.delete(key);
  }
}
