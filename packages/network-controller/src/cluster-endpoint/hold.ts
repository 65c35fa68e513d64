import { ClusterEndpointAnnotations, ClusterEndpointEventReasons, type Cluster } from '@metal-l2/api';
import type { ReconcileContext } from '@metal-l2/kube';
import { holdReasonValue } from '../machine-network/hold-without-network.js';
import type { EndpointContext } from './context.js';

/** Our hold: the pause carries our marker. Only such a pause is ever ended by this controller. */
export function isHeldByUs(cluster: Cluster): boolean {
  return cluster.spec?.paused === true && cluster.metadata.annotations?.[ClusterEndpointAnnotations.hold] !== undefined;
}

/**
 * Paused by someone else with its endpoint already there: clusterctl move (it pauses every
 * Cluster, then copies it with its ClusterEndpoint and claim), or a user. Cluster API's contract
 * is that nothing acts on a paused Cluster; for us an action then could only race the copy (a
 * second ClusterEndpoint or claim on the target, a claim dropped on the source). A paused Cluster
 * without an endpoint is still served: we write ours while the pause keeps CAPP's out.
 */
export function isPausedWithEndpoint(cluster: Cluster): boolean {
  const host = cluster.spec?.controlPlaneEndpoint?.host ?? '';
  return cluster.spec?.paused === true && !isHeldByUs(cluster) && host !== '';
}

interface At {
  readonly ctx: EndpointContext;
  readonly rctx: ReconcileContext;
  readonly cluster: Cluster;
}

/**
 * Why the Cluster waits, where `kubectl describe cluster` shows it: the hold-reason annotation and
 * a Warning Event of the same reason, each written once per new reason or message.
 */
export async function noteHoldReason(at: At, reason: string, message: string): Promise<void> {
  const { ctx, rctx, cluster } = at;
  const value = holdReasonValue(reason, message);
  if (cluster.metadata.annotations?.[ClusterEndpointAnnotations.holdReason] === value) return;
  await ctx.client.patch(
    ctx.types.cluster,
    { namespace: cluster.metadata.namespace ?? '', name: cluster.metadata.name ?? '' },
    { metadata: { annotations: { [ClusterEndpointAnnotations.holdReason]: value } } },
    { signal: rctx.signal },
  );
  ctx.events.event(cluster, { type: 'Warning', reason, message });
}

/**
 * Ends our hold: `spec.paused` removed with our marker and reason, guarded by the resourceVersion
 * read, so a pause someone set since is never lifted by a stale write. A marker left without a
 * pause (someone unpaused by hand) is cleaned up too.
 */
export async function releaseHold(at: At, why: string): Promise<void> {
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
