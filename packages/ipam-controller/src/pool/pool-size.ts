import type { IPPool } from '@metal-l2/api';
import { poolIndexKey, type PoolRef } from '../pool-ref.js';

/**
 * The pool objects' size budget, and the size of each pool's managedFields as last seen on the
 * wire. The informer cache drops managedFields (they are large and nobody reads them), but the API
 * server stores them with the object and counts them against its limit: so every object read or
 * written through the client is measured here, and a cached object's size is its own plus the
 * managedFields its pool had then. Between our writes, only other writers change managedFields,
 * by a few hundred bytes at most; the budget's reserve covers that.
 */
export class PoolSizes {
  private readonly managedFields = new Map<string, { readonly uid: string; readonly bytes: number }>();

  constructor(readonly budgetBytes: number) {}

  /** Measures an object as the API server returned it (managedFields present): its stored size. */
  remember(ref: PoolRef, pool: IPPool): number {
    const full = jsonBytes(pool);
    const managed = pool.metadata.managedFields === undefined ? 0 : full - jsonBytes(withoutManagedFields(pool));
    this.managedFields.set(poolIndexKey(ref), { uid: pool.metadata.uid ?? '', bytes: managed });
    return full;
  }

  /** The managedFields bytes last seen for this pool object, if any. */
  managedFieldsBytes(ref: PoolRef, pool: IPPool): number | undefined {
    const known = this.managedFields.get(poolIndexKey(ref));
    return known !== undefined && known.uid === (pool.metadata.uid ?? '') ? known.bytes : undefined;
  }

  forget(ref: PoolRef): void {
    this.managedFields.delete(poolIndexKey(ref));
  }
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

function withoutManagedFields(pool: IPPool): IPPool {
  const { managedFields: _managedFields, ...metadata } = pool.metadata;
  return { ...pool, metadata };
}
