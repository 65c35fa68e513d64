import type { IPPool, VrfSpec } from '@metal-l2/api';
import { describePool } from '../pool-ref.js';
import { overlapIssue, resolvePoolSpec, type Issue, type ResolvedPool } from '@metal-l2/ipam-core';

// Which pools must not overlap, for the webhook (refuse) and the controller (the older pool wins):
// two pools created at the same moment both pass a webhook whose cache has neither yet.

/**
 * Which VRF a pool's range lives in, so pools sharing one can be compared wherever they are
 * declared: the adopted VRF id, the id a created VRF got, or (before creation) project + name.
 */
export function vrfIdentity(pool: IPPool): string | undefined {
  const vrf: VrfSpec | undefined = pool.spec.vrf;
  if (vrf === undefined) return undefined;
  if (vrf.vrfID !== undefined) return `${vrf.projectID}/${vrf.vrfID}`;
  const created = pool.status?.vrf?.vrfID;
  if (created !== undefined) return `${vrf.projectID}/${created}`;
  return `${vrf.projectID}/create:${vrf.create?.name ?? ''}`;
}

/**
 * The pools a pool must not overlap: namespaced pools in its namespace, global pools among
 * themselves, and any pool in the same VRF (one routing table in Metal, wherever it is declared).
 */
export function competingPools(pool: IPPool, others: readonly IPPool[]): IPPool[] {
  const vrf = vrfIdentity(pool);
  return others.filter((other) => {
    if (other.kind === pool.kind && other.metadata.name === pool.metadata.name && other.metadata.namespace === pool.metadata.namespace)
      return false;
    if (vrf !== undefined && vrfIdentity(other) === vrf) return true;
    if (other.kind !== pool.kind) return false;
    return pool.kind === 'GlobalInClusterIPPool' || other.metadata.namespace === pool.metadata.namespace;
  });
}

/** Competing pools whose addresses overlap the pool's (resolved) ones, with the issue describing it. */
export function overlappingPools(
  pool: IPPool,
  resolved: ResolvedPool,
  others: readonly IPPool[],
): { readonly other: IPPool; readonly issue: Issue }[] {
  const found: { other: IPPool; issue: Issue }[] = [];
  for (const other of competingPools(pool, others)) {
    const otherResolved = resolvePoolSpec(other.spec);
    if (!otherResolved.ok || otherResolved.pool.family !== resolved.family) continue;
    const issue = overlapIssue({ pool: resolved, other: otherResolved.pool, otherName: describePool(other) });
    if (issue !== undefined) found.push({ other, issue });
  }
  return found;
}

/**
 * True when `a` came first: the earlier creationTimestamp; within the same second (its
 * resolution), the smaller kind/namespace/name, so that both pools reach the same verdict.
 */
export function isOlderPool(a: IPPool, b: IPPool): boolean {
  const at = Date.parse(a.metadata.creationTimestamp ?? '');
  const bt = Date.parse(b.metadata.creationTimestamp ?? '');
  if (!Number.isNaN(at) && !Number.isNaN(bt) && at !== bt) return at < bt;
  const key = (p: IPPool): string => `${p.kind ?? ''}/${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`;
  return key(a) < key(b);
}
