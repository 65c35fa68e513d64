import type { IPPool, PoolKind } from '@metal-l2/api';
import type { ObjectCache } from '../context.js';
import { jsonEqual, type AdmissionHandler, type AdmissionRequest } from '@metal-l2/kube';
import { validatePool, validatePoolDelete, validatePoolUpdate } from './pool-validation.js';

/** Webhook paths, as the chart's ValidatingWebhookConfiguration names them. */
export const poolWebhookPaths: Readonly<Record<PoolKind, string>> = {
  InClusterIPPool: '/validate-ipam-metal-x-k8s-io-v1alpha1-inclusterippool',
  GlobalInClusterIPPool: '/validate-ipam-metal-x-k8s-io-v1alpha1-globalinclusterippool',
};

/** Every pool the webhook compares against: both kinds, from the controller's caches. */
export type PoolLister = () => IPPool[];

export function listPools(caches: Readonly<Record<PoolKind, ObjectCache<IPPool> & { list(): IPPool[] }>>): PoolLister {
  return () => [...caches.InClusterIPPool.list(), ...caches.GlobalInClusterIPPool.list()];
}

function asPool(value: unknown, kind: PoolKind): IPPool | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const pool = value as IPPool;
  return pool.spec === undefined ? undefined : { ...pool, kind };
}

export function poolAdmissionHandler(kind: PoolKind, listAll: PoolLister): AdmissionHandler {
  return (request: AdmissionRequest) => {
    const pool = asPool(request.object, kind);
    const old = asPool(request.oldObject, kind);
    switch (request.operation) {
      case 'CREATE':
        return pool === undefined ? { allowed: false, message: 'no pool in the request' } : validatePool(pool, listAll());
      case 'UPDATE':
        if (pool === undefined || old === undefined) return { allowed: false, message: 'no pool in the request' };
        // Only spec changes are validated: metadata (finalizers, labels, annotations) and status
        // never change what a pool may hand out, and a pool that fails today's rules (made under
        // older ones, or overlapped since by a pool the webhook never saw) must still be able to
        // lose its finalizer once it is deleted.
        if (jsonEqual(pool.spec, old.spec)) return { allowed: true };
        return validatePoolUpdate(old, pool, listAll());
      case 'DELETE':
        return old === undefined ? { allowed: true } : validatePoolDelete(old);
      case 'CONNECT':
        return { allowed: true };
    }
  };
}
