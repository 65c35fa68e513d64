import { createHash } from 'node:crypto';
import {
  ClusterEndpointReasons,
  ClusterEndpointType,
  DEFAULT_ENDPOINT_PORT,
  NETWORK_GROUP,
  NETWORK_VERSION,
  type Cluster,
  type ClusterEndpoint,
  type ClusterEndpointTemplate,
} from '@metal-l2/api';
import { apiVersionOf, done, isAlreadyExists, requeueAfter, type ReconcileContext, type ReconcileResult } from '@metal-l2/kube';
import type { EndpointContext } from './context.js';
import { clusterHold, noteClusterHoldReason } from '../hold.js';

/** A new ClusterEndpoint: the template's spec copied (port and virtual router id resolved), controller-owned by the Cluster. */
export function newClusterEndpoint(cluster: Cluster, template: ClusterEndpointTemplate, clusterApiVersion: string): ClusterEndpoint {
  const { name = '', namespace = '', uid = '' } = cluster.metadata;
  const spec = template.spec;
  return {
    apiVersion: `${NETWORK_GROUP}/${NETWORK_VERSION}`,
    kind: 'ClusterEndpoint',
    metadata: {
      name,
      namespace,
      ownerReferences: [
        {
          apiVersion: clusterApiVersion,
          kind: 'Cluster',
          name,
          uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      templateName: template.metadata.name ?? '',
      vxlan: spec.vxlan,
      addressFromPool: { ...spec.addressFromPool },
      port: spec.port ?? DEFAULT_ENDPOINT_PORT,
      virtualRouterID: spec.virtualRouterID ?? virtualRouterIdOf(uid),
    },
  };
}

interface At {
  readonly ctx: EndpointContext;
  readonly rctx: ReconcileContext;
  readonly cluster: Cluster;
  readonly templateName: string;
}

/**
 * The ClusterEndpoint of a linked Cluster that has none, created from its template. While the
 * template is not found the Cluster stays held (fail closed: released, CAPI would copy CAPP's
 * public endpoint) and says why in an annotation, since there is no ClusterEndpoint yet to carry
 * a condition; a template created later wakes the Cluster.
 */
export async function ensureClusterEndpoint(at: At): Promise<ClusterEndpoint | ReconcileResult> {
  const { ctx, rctx, cluster } = at;
  const namespace = cluster.metadata.namespace ?? '';
  const name = cluster.metadata.name ?? '';
  const template = ctx.caches.templates.get({ namespace, name: at.templateName });
  if (template === undefined) {
    const message = `ClusterEndpointTemplate ${namespace}/${at.templateName} not found; ${
      clusterHold.isHeldByUs(cluster) ? 'the Cluster stays paused until it exists' : 'no endpoint is claimed until it exists'
    }`;
    await noteClusterHoldReason(at, ClusterEndpointReasons.templateNotFound, message);
    return done();
  }
  try {
    const created = await ctx.client.create(ClusterEndpointType, newClusterEndpoint(cluster, template, apiVersionOf(ctx.types.cluster)), {
      signal: rctx.signal,
    });
    rctx.logger.info('created ClusterEndpoint', { template: at.templateName });
    return created;
  } catch (err: unknown) {
    if (!isAlreadyExists(err)) throw new Error(`create ClusterEndpoint ${namespace}/${name}`, { cause: err });
    // Another replica (or our previous reconcile) made it: the cache brings it, and the next pass uses it.
    return requeueAfter(1_000);
  }
}

/**
 * The virtual router id a Cluster's VIP announcer uses when its template names none: 1–255 from
 * a hash of the Cluster's UID, so two clusters on one VLAN rarely collide (a template sets one
 * explicitly when they do). It is resolved once, into the ClusterEndpoint's spec (and status), so
 * a Cluster recreated by clusterctl move (a new UID, no status) keeps the id its machines announce.
 */
export function virtualRouterIdOf(clusterUid: string): number {
  const digest = createHash('sha256').update(clusterUid).digest();
  return (digest.readUInt32BE(0) % 255) + 1;
}
