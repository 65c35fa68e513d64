import { IpamAnnotations, PoolConditionTypes, PoolReasons, type IPAddress, type IPPool } from '@metal-l2/api';
import type { ConditionInput } from '@metal-l2/kube';
import type { PoolRef } from '../pool-ref.js';
import type { PoolBlocker } from './pool-status.js';

// Which management cluster allocates from a pool. `clusterctl move` copies a GlobalInClusterIPPool
// (cluster-scoped) to the target and never deletes it from the source, and a restore into another
// cluster leaves the original running: two providers would then hand out the same range. The pool
// carries, in metadata (which moves and restores keep, unlike status), the kube-system Namespace
// UID of the management cluster whose provider allocates from it. Another cluster's UID on a
// global pool marks a copy: it serves what its IPAddresses hold and allocates nothing new until an
// operator, who knows the source no longer allocates from it, writes this cluster's UID (adopts it).
// A namespaced pool moves whole (clusterctl deletes it in the source), so it simply takes the
// stamp of the cluster it is in.

/** Whose a pool is, by its allocating-cluster annotation. */
export type PoolOwnership =
  | { readonly kind: 'ours' }
  /**
   * Not stamped yet (a new pool, or one of the previous release), or a namespaced pool moved here
   * whole: stamped as this cluster's once it has a block layout.
   */
  | { readonly kind: 'to-stamp' }
  /** A global pool another management cluster allocates from. */
  | { readonly kind: 'copied'; readonly from: string };

export function poolOwnership(ref: PoolRef, pool: IPPool, managementCluster: string): PoolOwnership {
  const stamp = pool.metadata.annotations?.[IpamAnnotations.allocatingCluster];
  if (stamp === managementCluster) return { kind: 'ours' };
  if (stamp === undefined || stamp === '' || ref.namespace !== undefined) return { kind: 'to-stamp' };
  return { kind: 'copied', from: stamp };
}

/**
 * Whether the pool's records were made before and its status has lost them: it carries a stamp
 * (written only once its block layout was recorded) but no layout (a restore or a move, which
 * carry no status). A pool before blocks keeps its allocations in status and is not one.
 */
export function hasLostStatus(pool: IPPool): boolean {
  const stamp = pool.metadata.annotations?.[IpamAnnotations.allocatingCluster];
  return stamp !== undefined && stamp !== '' && pool.status?.blocks === undefined && pool.status?.allocations === undefined;
}

/** The annotations patch that stamps the pool as this cluster's, or undefined when there is nothing to write. */
export function stampPatch(ref: PoolRef, pool: IPPool, managementCluster: string): Record<string, string> | undefined {
  if (pool.status?.blocks === undefined) return undefined;
  return poolOwnership(ref, pool, managementCluster).kind === 'to-stamp'
    ? { [IpamAnnotations.allocatingCluster]: managementCluster }
    : undefined;
}

/** Why a copied global pool allocates nothing, and exactly what adopts it. */
export function copiedPoolBlocker(ref: PoolRef, from: string, managementCluster: string): PoolBlocker {
  return {
    reason: PoolReasons.copiedFromAnotherCluster,
    message:
      `copied from management cluster ${from} (clusterctl move, or a restore into another cluster), which may still ` +
      `allocate from the same addresses; this one (${managementCluster}) serves the addresses its IPAddresses hold and ` +
      `allocates nothing new. Once ${from} no longer allocates from it (the pool deleted there, or that cluster retired), ` +
      `adopt it: kubectl annotate globalinclusterippool ${ref.name} ${IpamAnnotations.allocatingCluster}=${managementCluster} --overwrite`,
  };
}

/** How many of the left claims a condition names. */
const NAMED_IN_CONDITION = 5;

/**
 * AddressesMovedOut, while addresses stay allocated for claims that left this management cluster
 * unreleased (clusterctl move; uncached-claims.ts): how many, which, and how to give one back.
 */
export function movedOutCondition(left: readonly IPAddress[]): ConditionInput | undefined {
  if (left.length === 0) return undefined;
  const sorted = [...left].sort((a, b) => key(a).localeCompare(key(b)));
  const named = sorted.slice(0, NAMED_IN_CONDITION).map((a) => `${key(a)} (${a.spec.address})`);
  const more = sorted.length > NAMED_IN_CONDITION ? ` and ${sorted.length - NAMED_IN_CONDITION} more` : '';
  const first = sorted[0];
  return {
    type: PoolConditionTypes.addressesMovedOut,
    status: 'True',
    reason: PoolReasons.claimsLeftWithoutRelease,
    message:
      `${left.length} address${left.length === 1 ? '' : 'es'} stay allocated for claims that left this management cluster ` +
      `without being released (clusterctl move deletes them that way; so does removing their finalizer): ${named.join(', ')}${more}. ` +
      'Their IPAddresses stay here as the record and no claim here is given those addresses. Once no machine uses one ' +
      `(its cluster was deleted where it went), release it here: kubectl delete ipaddress -n ${first?.metadata.namespace ?? ''} ${first?.metadata.name ?? ''}`,
  };
}

function key(address: IPAddress): string {
  return `${address.metadata.namespace ?? ''}/${address.spec.claimRef.name}`;
}
