import { keyOf, keyString, type KubeObject } from '../resource.js';

/**
 * A change of the cache as handlers see it. `resync` re-announces a cached object on the
 * informer's resync period, so level-based controllers look at everything again now and then.
 */
export type CacheEvent<T extends KubeObject> =
  | { readonly type: 'add'; readonly object: T }
  | { readonly type: 'update'; readonly oldObject: T; readonly object: T }
  | { readonly type: 'delete'; readonly object: T }
  | { readonly type: 'resync'; readonly object: T };

export type CacheEventType = CacheEvent<KubeObject>['type'];

/** A watch event that changes an object (BOOKMARK and ERROR never reach the store). */
export interface ObjectWatchEvent<T extends KubeObject> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: T;
}

export function cacheKey(obj: KubeObject): string {
  return keyString(keyOf(obj));
}

/**
 * `keyOf` gives an object's cache key (default cacheKey; the informer's hands out one string per
 * object across its versions).
 * Applies one watch event to `store` (mutated in place) and returns the change handlers should
 * see, or undefined when nothing changed: an event repeating the cached resourceVersion (a
 * watch restarted from an older version), or the deletion of an object the cache never had.
 */
export function applyWatchEvent<T extends KubeObject>(
  store: Map<string, T>,
  event: ObjectWatchEvent<T>,
  keyOf: (obj: T) => string = cacheKey,
): CacheEvent<T> | undefined {
  const key = keyOf(event.object);
  const old = store.get(key);
  if (event.type === 'DELETED') {
    if (old === undefined) return undefined;
    store.delete(key);
    return { type: 'delete', object: event.object };
  }
  if (old !== undefined && old.metadata.resourceVersion === event.object.metadata.resourceVersion) return undefined;
  store.set(key, event.object);
  return old === undefined ? { type: 'add', object: event.object } : { type: 'update', oldObject: old, object: event.object };
}

/**
 * Makes `store` hold exactly `items` (the result of a full list) and returns the differences as
 * changes: new objects are added, changed ones (another resourceVersion) updated, missing ones
 * deleted with their last known state. Unchanged objects yield nothing.
 */
export function replaceAll<T extends KubeObject>(
  store: Map<string, T>,
  items: readonly T[],
  keyOf: (obj: T) => string = cacheKey,
): CacheEvent<T>[] {
  const changes: CacheEvent<T>[] = [];
  const seen = new Set<string>();
  for (const object of items) {
    const key = keyOf(object);
    seen.add(key);
    const old = store.get(key);
    if (old === undefined) {
      changes.push({ type: 'add', object });
    } else if (old.metadata.resourceVersion !== object.metadata.resourceVersion) {
      changes.push({ type: 'update', oldObject: old, object });
    } else {
      continue;
    }
    store.set(key, object);
  }
  for (const [key, object] of store) {
    if (!seen.has(key)) {
      store.delete(key);
      changes.push({ type: 'delete', object });
    }
  }
  return changes;
}
