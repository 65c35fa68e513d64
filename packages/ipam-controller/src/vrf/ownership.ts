import { IPAM_GROUP } from '@metal-l2/api';
import { formatPoolRef, type PoolRef } from '../pool-ref.js';

// Which Metal objects a pool created. status.vrf.created says so, but status is not carried by
// clusterctl move or a backup restore, and a crash can fall between a create call and the status
// write that records it. So every VRF, VLAN and reservation a pool creates also carries a tag
// naming the pool (kind, namespace, name: what survives a move; a UID would not). Metal Gateways
// take no tags; see ensureMetalGateway for how theirs is known.

const TAG_PREFIX = `${IPAM_GROUP}/pool=`;

/** The tag a pool puts on what it creates, e.g. `ipam.metal.x-k8s.io/pool=InClusterIPPool/ns/name`. */
export function ownerTag(ref: PoolRef): string {
  return `${TAG_PREFIX}${ref.kind}/${ref.namespace === undefined ? '' : `${ref.namespace}/`}${ref.name}`;
}

export function isOwnedBy(tags: readonly string[] | undefined, ref: PoolRef): boolean {
  return (tags ?? []).includes(ownerTag(ref));
}

/** The description / details text of what a pool creates: for people browsing the Metal console. */
export function createdFor(ref: PoolRef): string {
  return `created by metal-l2 for ${formatPoolRef(ref)}`;
}
