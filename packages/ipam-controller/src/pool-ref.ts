import { GlobalInClusterIPPoolType, InClusterIPPoolType, type IPPool, type PoolKind, type ResourceType } from '@metal-l2/api';
import type { ObjectKey } from '@metal-l2/kube';

/** Identifies one pool: its kind, and its namespace when it is namespaced. */
export interface PoolRef {
  readonly kind: PoolKind;
  readonly namespace?: string | undefined;
  readonly name: string;
}

export function poolTypeOf(kind: PoolKind): ResourceType {
  return kind === 'InClusterIPPool' ? InClusterIPPoolType : GlobalInClusterIPPoolType;
}

export function isOurPoolKind(kind: string): kind is PoolKind {
  return kind === InClusterIPPoolType.kind || kind === GlobalInClusterIPPoolType.kind;
}

export function formatPoolRef(pool: PoolRef): string {
  return pool.namespace === undefined ? `${pool.kind} ${pool.name}` : `${pool.kind} ${pool.namespace}/${pool.name}`;
}

/** A string key for maps and indexes: `InClusterIPPool/ns/name` or `GlobalInClusterIPPool/name`. */
export function poolIndexKey(pool: PoolRef): string {
  return pool.namespace === undefined ? `${pool.kind}/${pool.name}` : `${pool.kind}/${pool.namespace}/${pool.name}`;
}

/** The pool's key for the API client and the cache. */
export function poolObjectKey(ref: PoolRef): ObjectKey {
  return ref.namespace === undefined ? { name: ref.name } : { namespace: ref.namespace, name: ref.name };
}

/** `Kind ns/name` or `Kind name`, as messages name a pool object. */
export function describePool(pool: IPPool): string {
  const ns = pool.metadata.namespace;
  return ns === undefined || ns === '' ? `${pool.kind} ${pool.metadata.name ?? ''}` : `${pool.kind} ${ns}/${pool.metadata.name ?? ''}`;
}

/** The ref of a pool object of `kind` (a global pool has no namespace). */
export function refOfPool(kind: PoolKind, pool: IPPool): PoolRef {
  const name = pool.metadata.name ?? '';
  return kind === 'InClusterIPPool' ? { kind, namespace: pool.metadata.namespace ?? '', name } : { kind, name };
}
