// The mutating webhook on Cluster CREATE: a Cluster linked to a ClusterEndpointTemplate and
// created without a control-plane endpoint is created paused, with our hold marker beside the
// pause, so Cluster API cannot copy CAPP's public elastic IP into it before our VLAN address is
// written (Cluster API copies the infrastructure cluster's endpoint only while the Cluster's own is
// empty, and skips paused Clusters; so does CAPP).

import { ClusterEndpointAnnotations, type Cluster } from '@metal-l2/api';
import { type AdmissionHandler, type AdmissionRequest, type AdmissionVerdict, type JsonPatchOperation, type Logger } from '@metal-l2/kube';
import { clusterHold } from '../hold.js';

export interface ClusterWebhookDeps {
  /** The clock stamped into the hold marker. */
  readonly now: () => Date;
  readonly logger?: Logger;
  /** The namespace the controller watches, when it watches one: Clusters elsewhere pass (nobody would release them). */
  readonly namespace?: string;
}

/** What the webhook does with one new Cluster, and why (for logs and tests). */
export type ClusterHoldDecision =
  | { readonly kind: 'hold'; readonly templateName: string; readonly patch: readonly JsonPatchOperation[] }
  | { readonly kind: 'pass'; readonly why: 'unlinked' | 'endpoint-set' | 'held-already' }
  | { readonly kind: 'paused-by-someone-else'; readonly templateName: string };

/**
 * Pure part of the decision:
 * - an unlinked Cluster passes;
 * - a Cluster created with an endpoint passes: clusterctl move and restores recreate Clusters
 *   with theirs, and a Cluster that has one needs none from us;
 * - a Cluster already paused with our marker passes (the hold carries over; our controller ends it);
 * - a Cluster paused by someone else stays as it is, without our marker: we never end a pause
 *   that is not ours (the response warns that lifting it early lets CAPP's endpoint in);
 * - otherwise: `spec.paused: true` and `network.metal.x-k8s.io/endpoint-hold: <now>`.
 */
export function decideClusterHold(cluster: Pick<Cluster, 'metadata' | 'spec'>, now: Date): ClusterHoldDecision {
  const annotations = cluster.metadata.annotations;
  const templateName = annotations?.[ClusterEndpointAnnotations.template];
  if (templateName === undefined || templateName === '') return { kind: 'pass', why: 'unlinked' };
  const host = cluster.spec?.controlPlaneEndpoint?.host;
  if (host !== undefined && host !== '') return { kind: 'pass', why: 'endpoint-set' };
  const pausedBy = clusterHold.pausedBy(cluster);
  if (pausedBy === 'us') return { kind: 'pass', why: 'held-already' };
  if (pausedBy === 'someone-else') return { kind: 'paused-by-someone-else', templateName };
  const patch = clusterHold.admissionPatch(cluster, now);
  return { kind: 'hold', templateName, patch };
}

/**
 * The handler for NetworkWebhookPaths.cluster. It reads nothing, so it cannot fail on a read; the
 * chart registers it with failurePolicy Fail and a matchCondition on the annotation, so only
 * linked Clusters wait for it and an unlinked Cluster is never refused because our pod is down.
 */
export function clusterAdmissionHandler(deps: ClusterWebhookDeps): AdmissionHandler {
  return (request: AdmissionRequest): Promise<AdmissionVerdict> => {
    if (request.operation !== 'CREATE') return Promise.resolve({ allowed: true });
    const cluster = asCluster(request);
    if (cluster === undefined) return Promise.resolve({ allowed: false, message: 'the request carries no Cluster object' });
    const described = `Cluster ${cluster.metadata.namespace ?? ''}/${cluster.metadata.name ?? cluster.metadata.generateName ?? ''}`;
    if (deps.namespace !== undefined && cluster.metadata.namespace !== deps.namespace) return Promise.resolve({ allowed: true });
    const decision = decideClusterHold(cluster, deps.now());
    const fields = { cluster: described, dryRun: request.dryRun === true };
    switch (decision.kind) {
      case 'pass':
        deps.logger?.debug('Cluster passes', { ...fields, why: decision.why });
        return Promise.resolve({ allowed: true });
      case 'paused-by-someone-else':
        deps.logger?.info('Cluster already paused by someone else; not holding it', { ...fields, template: decision.templateName });
        return Promise.resolve({
          allowed: true,
          warnings: [
            `${described} is already paused; metal-l2 will not remove that pause. If it is lifted before the endpoint of ` +
              `ClusterEndpointTemplate ${decision.templateName} is written, Cluster API may copy the infrastructure's endpoint instead.`,
          ],
        });
      case 'hold':
        deps.logger?.info('holding Cluster for its control-plane endpoint', { ...fields, template: decision.templateName });
        return Promise.resolve({ allowed: true, patch: decision.patch });
    }
  };
}

function asCluster(request: AdmissionRequest): Cluster | undefined {
  const value = request.object;
  if (value === null || typeof value !== 'object') return undefined;
  const obj = value as Partial<Cluster>;
  if (obj.metadata === undefined || typeof obj.metadata !== 'object') return undefined;
  // On CREATE the namespace may be only in the request (it comes from the URL).
  const namespace = obj.metadata.namespace ?? request.namespace;
  return { ...obj, metadata: { ...obj.metadata, ...(namespace === undefined ? {} : { namespace }) } };
}
