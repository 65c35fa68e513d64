import { ClusterEndpointAnnotations, ClusterEndpointType, type ClusterEndpoint } from '@metal-l2/api';
import { PatchHelper, done, requeueAfter, type ReconcileContext, type ReconcileResult } from '@metal-l2/kube';
import type { StepOutcome } from '../machine-network/scope.js';
import type { EndpointContext, EndpointScope, EndpointStep } from './context.js';
import { ensureEndpointClaim, waitForEndpointAddress } from './endpoint-claim.js';
import { ensureClusterEndpoint } from './ensure-endpoint.js';
import { releaseHold } from './hold.js';
import { releaseClusterHold, setClusterEndpoint } from './set-endpoint.js';
import { summarizeEndpointReady } from './status.js';

/** Claim, wait for the address, write it into the Cluster, end our hold: each step states its postcondition. */
const steps: readonly EndpointStep[] = [ensureEndpointClaim, waitForEndpointAddress, setClusterEndpoint, releaseClusterHold];

async function runSteps(scope: EndpointScope): Promise<StepOutcome> {
  for (const step of steps) {
    const outcome = await step(scope);
    if (outcome.kind !== 'continue') return outcome;
  }
  return { kind: 'continue' };
}

/**
 * Reconciles the control-plane endpoint of one Cluster (key = its namespace/name = its
 * ClusterEndpoint's). A Cluster going away needs nothing from us: the ClusterEndpoint and the
 * claim are owned by it, so owner GC deletes them once it is gone and the IPAM provider's claim
 * finalizer gives the address back; the address stays claimed while the control plane is torn down.
 */
export async function reconcileClusterEndpoint(
  ctx: EndpointContext,
  key: { namespace: string; name: string },
  rctx: ReconcileContext,
): Promise<ReconcileResult> {
  const cluster = ctx.caches.clusters.get(key);
  if (cluster === undefined || cluster.metadata.deletionTimestamp !== undefined) return done();
  const templateName = cluster.metadata.annotations?.[ClusterEndpointAnnotations.template];
  let endpoint = ctx.caches.endpoints.get(key);
  const ours = endpoint !== undefined && (endpoint.metadata.ownerReferences ?? []).some((o) => o.uid === cluster.metadata.uid);
  if (templateName === undefined || templateName === '') {
    // Unlinked (the annotation removed, e.g. to keep an endpoint set by hand): a hold of ours ends.
    await releaseHold({ ctx, rctx, cluster }, 'no ClusterEndpointTemplate linked any more; released the pause');
    return done();
  }
  if (endpoint !== undefined && !ours) return requeueAfter(1_000); // a ClusterEndpoint of a former Cluster of this name, going with it
  if (endpoint === undefined) {
    const ensured = await ensureClusterEndpoint({ ctx, rctx, cluster, templateName });
    if (!('apiVersion' in ensured)) return ensured;
    endpoint = ensured;
  }
  if (cluster.metadata.annotations?.[ClusterEndpointAnnotations.holdReason] !== undefined) {
    // The ClusterEndpoint's conditions say the rest now. The Cluster's update brings us back with
    // its new version (the endpoint write below is guarded by the version it reads).
    await ctx.client.patch(
      ctx.types.cluster,
      key,
      { metadata: { annotations: { [ClusterEndpointAnnotations.holdReason]: null } } },
      { signal: rctx.signal },
    );
    return done();
  }

  const patch = PatchHelper.snapshot(ClusterEndpointType, endpoint);
  const scope: EndpointScope = { ctx, rctx, ...key, cluster, endpoint: structuredClone(endpoint), now: ctx.now(), logger: rctx.logger };
  const outcome = await runSteps(scope);
  const working: ClusterEndpoint = scope.endpoint;
  (working.status ??= {}).observedGeneration = working.metadata.generation ?? 0;
  summarizeEndpointReady(scope);
  await patch.patch(ctx.client, working, { signal: rctx.signal });
  switch (outcome.kind) {
    case 'continue':
      return done();
    case 'wait':
      return outcome.afterMs === undefined ? done() : requeueAfter(outcome.afterMs);
    case 'fail':
      throw outcome.error;
  }
}
