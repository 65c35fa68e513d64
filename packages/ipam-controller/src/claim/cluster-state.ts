import { CapiAnnotations } from '@metal-l2/api';
import type { IpamContext } from '../context.js';
import type { ClaimView } from './claim-view.js';

/** What the claim's Cluster says about acting on it: the contract's pause and linkage rules. */
export type ClusterState = 'unlinked' | 'active' | 'paused' | 'missing';

/**
 * The Cluster is found by name, as the contract links it. A claim owned by a Cluster (its owner
 * reference) whose uid is not the one of that name belongs to a former Cluster, deleted and
 * created again: the new one's pause is not the claim's, and its own Cluster is missing.
 */
export function clusterStateOf(ctx: Pick<IpamContext, 'caches'>, claim: ClaimView): ClusterState {
  if (claim.clusterName === undefined) return 'unlinked';
  const cluster = ctx.caches.clusters?.get({ namespace: claim.namespace, name: claim.clusterName });
  if (cluster === undefined) return 'missing';
  if (claim.clusterUid !== undefined && cluster.metadata.uid !== claim.clusterUid) return 'missing';
  const paused = cluster.spec?.paused === true || cluster.metadata.annotations?.[CapiAnnotations.paused] !== undefined;
  return paused ? 'paused' : 'active';
}

/**
 * Whether the provider may act on the claim now. A paused claim or Cluster holds everything; a
 * missing Cluster holds allocation but not release, so deleting a claim of a deleted Cluster
 * still frees its address (the reference provider's fix for its issue #289).
 */
export function mayActOn(claim: ClaimView, cluster: ClusterState): boolean {
  if (claim.isPaused || cluster === 'paused') return false;
  if (cluster === 'missing') return claim.isDeleting;
  return true;
}

/**
 * Whether a deleting claim's address may be released now: once the provider may act on it and
 * no other controller's finalizer holds the deletion (metal3's rule; the network controller holds
 * a Cluster endpoint claim so while a machine still announces the address). Released earlier,
 * the address could go to another claim while the claim's holder still uses it.
 */
export function mayRelease(ctx: Pick<IpamContext, 'caches'>, claim: ClaimView): boolean {
  return claim.isDeleting && claim.hasFinalizer && !claim.hasOtherFinalizers && mayActOn(claim, clusterStateOf(ctx, claim));
}
