import { CapiAnnotations } from '@metal-l2/api';
import type { IpamContext } from '../context.js';
import type { ClaimView } from './claim-view.js';

/** What the claim's Cluster says about acting on it: the contract's pause and linkage rules. */
export type ClusterState = 'unlinked' | 'active' | 'paused' | 'missing';

export function clusterStateOf(ctx: Pick<IpamContext, 'caches'>, claim: ClaimView): ClusterState {
  if (claim.clusterName === undefined) return 'unlinked';
  const cluster = ctx.caches.clusters?.get({ namespace: claim.namespace, name: claim.clusterName });
  if (cluster === undefined) return 'missing';
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
