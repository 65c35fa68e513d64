import { IPAM_GROUP } from '@metal-l2/api';
import { formatPoolRef, type PoolRef } from '../pool-ref.js';

// Which Metal objects a pool created. status.vrf.created says so, but status is not carried by
// clusterctl move or a backup restore, and a crash can fall between a create call and the status
// write that records it. So every VRF, VLAN and reservation a pool creates also carries two tags:
// one naming the pool (kind, namespace, name: what survives a move; a UID would not) and one
// naming the management cluster whose controller made it. A pool name alone is not unique: two
// management clusters sharing a Metal project may both have `default/vrf-pool`, and without the
// cluster tag each would take the other's objects for its own and delete them with its pool.
// Metal Gateways take no tags; see ensureMetalGateway for how theirs is known.

const POOL_TAG_PREFIX = `${IPAM_GROUP}/pool=`;
const CLUSTER_TAG_PREFIX = `${IPAM_GROUP}/management-cluster=`;

/** Who creates: the pool, and the identity of the management cluster its controller runs in. */
export interface Owner {
  readonly ref: PoolRef;
  /** The management cluster's identity (cluster-identity.ts): the kube-system Namespace UID by default. */
  readonly clusterIdentity: string;
}

/** The tag naming the pool, e.g. `ipam.metal.x-k8s.io/pool=InClusterIPPool/ns/name`. */
export function poolTag(ref: PoolRef): string {
  return `${POOL_TAG_PREFIX}${ref.kind}/${ref.namespace === undefined ? '' : `${ref.namespace}/`}${ref.name}`;
}

/** The tag naming the management cluster, e.g. `ipam.metal.x-k8s.io/management-cluster=<uid>`. */
export function clusterTag(clusterIdentity: string): string {
  return `${CLUSTER_TAG_PREFIX}${clusterIdentity}`;
}

/** The tags a pool puts on what it creates. */
export function ownerTags(owner: Owner): string[] {
  return [poolTag(owner.ref), clusterTag(owner.clusterIdentity)];
}

/**
 * Whose an object found in Metal is, from its tags:
 * - `ours`: this pool's tag and this management cluster's;
 * - `otherCluster`: made by the controller of another management cluster (for any pool);
 * - `legacy`: this pool's tag and no cluster tag, as metal-l2 wrote before it tagged clusters:
 *   it may be this cluster's or another's, the tags cannot tell;
 * - `none`: not made by metal-l2 for this pool.
 */
export type Ownership =
  | { readonly kind: 'ours' }
  | { readonly kind: 'otherCluster'; readonly clusterIdentity: string }
  | { readonly kind: 'legacy' }
  | { readonly kind: 'none' };

export function ownershipOf(tags: readonly string[] | undefined, owner: Owner): Ownership {
  const list = tags ?? [];
  const cluster = list.find((t) => t.startsWith(CLUSTER_TAG_PREFIX))?.slice(CLUSTER_TAG_PREFIX.length);
  if (cluster !== undefined && cluster !== owner.clusterIdentity) return { kind: 'otherCluster', clusterIdentity: cluster };
  if (!list.includes(poolTag(owner.ref))) return { kind: 'none' };
  return cluster === undefined ? { kind: 'legacy' } : { kind: 'ours' };
}

/** The description / details text of what a pool creates: for people browsing the Metal console. */
export function createdFor(ref: PoolRef): string {
  return `created by metal-l2 for ${formatPoolRef(ref)}`;
}

/** Why an object found by name cannot be taken: for VRFConflict messages. */
export function describeForeign(what: string, ownership: Ownership, owner: Owner): string | undefined {
  switch (ownership.kind) {
    case 'ours':
    case 'none':
      return undefined;
    case 'otherCluster':
      return `${what} was created by the metal-l2 controller of another management cluster (${ownership.clusterIdentity}; this one is ${owner.clusterIdentity}): it is never adopted, changed or deleted from here`;
    case 'legacy':
      return `${what} carries the tag ${poolTag(owner.ref)} without a management-cluster tag (written by metal-l2 before it tagged clusters) and this pool's status does not record it: it may belong to another management cluster sharing the project. If it is this cluster's, add the tag ${clusterTag(owner.clusterIdentity)} to it in Metal`;
  }
}
