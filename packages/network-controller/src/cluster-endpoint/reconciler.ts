import {
  ClusterEndpointAnnotations,
  ClusterEndpointConditionTypes,
  ClusterEndpointReasons,
  ClusterEndpointType,
  type ClusterEndpoint,
} from '@metal-l2/api';
import {
  PatchHelper,
  done,
  getCondition,
  requeueAfter,
  runSteps,
  type ReconcileContext,
  type ReconcileResult,
  type StepOutcome,
} from '@metal-l2/kube';
import { settleClaimFinalizer } from './claim-finalizer.js';
import type { EndpointContext, EndpointScope, EndpointStep } from './context.js';
import { ensureEndpointClaim, linkEndpointClaim, waitForEndpointAddress } from './endpoint-claim.js';
import { ensureClusterEndpoint } from './ensure-endpoint.js';
import { respectForeignEndpoint, unlinkCluster } from './foreign-endpoint.js';
import { clusterHold, isPausedWithEndpoint, noteClusterHoldReason } from '../hold.js';
import { releaseClusterHold, setClusterEndpoint } from './set-endpoint.js';
import { summarizeEndpointReady } from './status.js';

/**
 * Each step states its postcondition: the Cluster's own endpoint respected, claim, address,
 * written, claim linked, hold ended (the claim's finalizer is settled before, whatever the Cluster's state).
 */
const steps: readonly EndpointStep[] = [
  respectForeignEndpoint,
  ensureEndpointClaim,
  waitForEndpointAddress,
  setClusterEndpoint,
  linkEndpointClaim,
  releaseClusterHold,
];

/**
 * A Cluster we still hold because its address is not there says why on the Cluster too (the
 * ClusterEndpoint's condition, as the hold-reason annotation and an Event). A foreign endpoint
 * ended the hold already (its reason is on the ClusterEndpoint and in its Event).
 */
async function reportWaiting(scope: EndpointScope, outcome: StepOutcome): Promise<void> {
  if (outcome.kind === 'continue' || scope.quiet === true || !clusterHold.isHeldByUs(scope.cluster)) return;
  const allocated = getCondition(scope.endpoint.status?.conditions, ClusterEndpointConditionTypes.addressAllocated);
  if (allocated === undefined || allocated.status === 'True' || allocated.reason === ClusterEndpointReasons.endpointAlreadySet) return;
  await noteClusterHoldReason(scope, allocated.reason ?? ClusterEndpointReasons.waitingForAddress, allocated.message ?? '');
}

/**
 * Reconciles the control-plane endpoint of one Cluster (key = its namespace/name = its
 * ClusterEndpoint's). A Cluster going away needs little from us: the ClusterEndpoint and the
 * claim are owned by it, so owner GC deletes them once it is gone, and the claim's deletion waits
 * for our finalizer while a machine still announces its address; then the IPAM provider's
 * finalizer gives the address back. A deleted claim is let go first, whatever became of its
 * Cluster (gone, or a new one of the same name).
 */
export async function reconcileClusterEndpoint(
  ctx: EndpointContext,
  key: { namespace: string; name: string },
  rctx: ReconcileContext,
): Promise<ReconcileResult> {
  await settleClaimFinalizer(ctx, key, rctx);
  const cluster = ctx.caches.clusters.get(key);
  if (cluster === undefined || cluster.metadata.deletionTimestamp !== undefined) return done();
  // clusterctl move is copying it (or a user paused it): its unpause brings us back.
  if (isPausedWithEndpoint(cluster)) return done();
  const templateName = cluster.metadata.annotations?.[ClusterEndpointAnnotations.template];
  let endpoint = ctx.caches.endpoints.get(key);
  const ours = endpoint !== undefined && (endpoint.metadata.ownerReferences ?? []).some((o) => o.uid === cluster.metadata.uid);
  if (templateName === undefined || templateName === '') {
    await unlinkCluster({ ctx, rctx, cluster, endpoint: ours ? endpoint : undefined });
    return done();
  }
  if (endpoint !== undefined && !ours) return requeueAfter(1_000); // a ClusterEndpoint of a former Cluster of this name, going with it
  if (endpoint === undefined) {
    const ensured = await ensureClusterEndpoint({ ctx, rctx, cluster, templateName });
    if (!('apiVersion' in ensured)) return ensured;
    endpoint = ensured;
  }

  const patch = PatchHelper.snapshot(ClusterEndpointType, endpoint);
  const scope: EndpointScope = { ctx, rctx, ...key, cluster, endpoint: structuredClone(endpoint), now: ctx.now(), logger: rctx.logger };
  const outcome = await runSteps(scope, steps);
  const working: ClusterEndpoint = scope.endpoint;
  (working.status ??= {}).observedGeneration = working.metadata.generation ?? 0;
  summarizeEndpointReady(scope);
  await patch.patch(ctx.client, working, { signal: rctx.signal });
  await reportWaiting(scope, outcome);
  switch (outcome.kind) {
    case 'continue':
      return done();
    case 'wait':
      return outcome.afterMs === undefined ? done() : requeueAfter(outcome.afterMs);
    case 'fail':
      throw outcome.error;
  }
}
