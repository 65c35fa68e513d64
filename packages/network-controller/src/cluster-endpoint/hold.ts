import { ClusterEndpointAnnotations, ClusterEndpointEventReasons, type Cluster } from '@metal-l2/api';
import type { ReconcileContext } from '@metal-l2/kube';
import type { EndpointContext } from './context.js';

/** Our hold: the pause carries our marker. Only such a pause is ever ended by this controller. */
export function isHeldByUs(cluster: Cluster): boolean {
  return cluster.spec?.paused === true && cluster.metadata.annotations?.[ClusterEndpointAnnotations.hold] !== undefined;
}

/**
 * Ends our hold: `spec.paused` removed with our marker and reason, guarded by the resourceVersion
 * read, so a pause someone set since is never lifted by a stale write. A marker left without a
 * pause (someone unpaused by hand) is cleaned up too.
 */
export async function releaseHold(at: { ctx: EndpointContext; rctx: ReconcileContext; cluster: Cluster }, why: string): Promise<void> {
  const { ctx, rctx, cluster } = at;
  const annotations = cluster.metadata.annotations ?? {};
  if (annotations[ClusterEndpointAnnotations.hold] === undefined && annotations[ClusterEndpointAnnotations.holdReason] === undefined)
    return;
  const held = isHeldByUs(cluster);
  await ctx.client.patch(
    ctx.types.cluster,
    { namespace: cluster.metadata.namespace ?? '', name: cluster.metadata.name ?? '' },
    {
      metadata: { annotations: { [ClusterEndpointAnnotations.hold]: null, [ClusterEndpointAnnotations.holdReason]: null } },
      ...(held ? { spec: { paused: null } } : {}),
    },
    {
      ...(cluster.metadata.resourceVersion === undefined ? {} : { resourceVersion: cluster.metadata.resourceVersion }),
      signal: rctx.signal,
    },
  );
  if (held) {
    ctx.events.event(cluster, { type: 'Normal', reason: ClusterEndpointEventReasons.pauseReleased, message: why });
    rctx.logger.info('released the Cluster', { why });
  }
}
