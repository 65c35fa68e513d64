import type { IPPool, PoolKind } from '@metal-l2/api';
import { encodeAllocations, type Allocation } from '@metal-l2/ipam-core';
import type { ObjectCache } from '../context.js';
import { jsonEqual, type AdmissionHandler, type AdmissionRequest, type AdmissionVerdict } from '@metal-l2/kube';
import { validatePool, validatePoolDelete, validatePoolUpdate } from './pool-validation.js';

/** Webhook paths, as the chart's ValidatingWebhookConfiguration names them. */
export const poolWebhookPaths: Readonly<Record<PoolKind, string>> = {
  InClusterIPPool: '/validate-ipam-metal-x-k8s-io-v1alpha1-inclusterippool',
  GlobalInClusterIPPool: '/validate-ipam-metal-x-k8s-io-v1alpha1-globalinclusterippool',
};

/**
 * Every pool the webhook compares against: both kinds, from the controller's caches; undefined
 * until both caches have synced (an empty cache would let any overlap through).
 */
export type PoolLister = () => IPPool[] | undefined;

export function listPools(caches: Readonly<Record<PoolKind, ObjectCache<IPPool> & { hasSynced(): boolean }>>): PoolLister {
  return () =>
    caches.InClusterIPPool.hasSynced() && caches.GlobalInClusterIPPool.hasSynced()
      ? [
          ...caches.InClusterIPPool.list().map((p): IPPool => ({ ...p, kind: 'InClusterIPPool' })),
          ...caches.GlobalInClusterIPPool.list().map((p): IPPool => ({ ...p, kind: 'GlobalInClusterIPPool' })),
        ]
      : undefined;
}

const notSynced = {
  allowed: false,
  message: 'the webhook has not read the existing pools yet (its cache is syncing); try again in a moment',
} as const;

function asPool(value: unknown, kind: PoolKind): IPPool | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const pool = value as IPPool;
  return pool.spec === undefined ? undefined : { ...pool, kind };
}

export interface PoolWebhookOptions {
  readonly listAll: PoolLister;
  /**
   * What a pool holds (its IPAddressBlocks from the cache, and its own status before blocks):
   * the rules on shrinking, moving and deleting read the pool's allocations from its status.
   */
  readonly allocationsOf?: (pool: IPPool) => readonly Allocation[];
}

export function poolAdmissionHandler(kind: PoolKind, options: PoolWebhookOptions): AdmissionHandler {
  const { listAll, allocationsOf } = options;
  const withAllocations = (pool: IPPool | undefined): IPPool | undefined =>
    pool === undefined || allocationsOf === undefined
      ? pool
      : { ...pool, status: { ...pool.status, allocations: encodeAllocations(allocationsOf(pool)) } };
  return (request: AdmissionRequest): AdmissionVerdict => {
    const pool = asPool(request.object, kind);
    const old = withAllocations(asPool(request.oldObject, kind));
    switch (request.operation) {
      case 'CREATE': {
        if (pool === undefined) return { allowed: false, message: 'no pool in the request' };
        const others = listAll();
        return others === undefined ? notSynced : validatePool(pool, others);
      }
      case 'UPDATE':
        if (pool === undefined || old === undefined) return { allowed: false, message: 'no pool in the request' };
        // Only spec changes are validated: metadata (finalizers, labels, annotations) and status
        // never change what a pool may hand out, and a pool that fails today's rules (made under
        // older ones, or overlapped since by a pool the webhook never saw) must still be able to
        // lose its finalizer once it is deleted.
        if (jsonEqual(pool.spec, old.spec)) return { allowed: true };
        {
          const others = listAll();
          return others === undefined ? notSynced : validatePoolUpdate(old, pool, others);
        }
      case 'DELETE':
        return old === undefined ? { allowed: true } : validatePoolDelete(old);
      case 'CONNECT':
        return { allowed: true };
    }
  };
}
