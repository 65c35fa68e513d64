import { failed, proceed, type StepOutcome, waitFor } from '@metal-l2/kube';
import { ClusterEndpointConditionTypes, ClusterEndpointEventReasons, ClusterEndpointReasons } from '@metal-l2/api';
import type { EndpointScope } from './context.js';
import { clusterHold, endClusterHold } from '../hold.js';
import { markEndpointAlreadySet, markEndpointCondition } from './status.js';

/**
 * Postcondition: `Cluster.spec.controlPlaneEndpoint` is our address and port. Written only while
 * it is empty (guarded by the resourceVersion read, so a value written meanwhile is never
 * overwritten). Another value already there is reported with both, and stays.
 */
export async function setClusterEndpoint(scope: EndpointScope): Promise<StepOutcome> {
  const { ctx, cluster, endpoint } = scope;
  const address = endpoint.status?.address;
  const port = endpoint.spec.port;
  if (address === undefined || port === undefined) return waitFor();
  const current = cluster.spec?.controlPlaneEndpoint;
  const host = current?.host ?? '';
  if (host === '') {
    try {
      await ctx.client.patch(
        ctx.types.cluster,
        { namespace: scope.namespace, name: scope.name },
        { spec: { controlPlaneEndpoint: { host: address, port } } },
        {
          ...(cluster.metadata.resourceVersion === undefined ? {} : { resourceVersion: cluster.metadata.resourceVersion }),
          signal: scope.rctx.signal,
        },
      );
    } catch (err: unknown) {
      return failed(new Error(`write the control-plane endpoint of Cluster ${scope.namespace}/${scope.name}`, { cause: err }));
    }
    ctx.events.event(cluster, {
      type: 'Normal',
      reason: ClusterEndpointEventReasons.endpointSet,
      message: `control-plane endpoint ${address}:${port}`,
    });
    scope.logger.info('wrote the control-plane endpoint', { address, port });
    // The Cluster changed: the next reconcile reads it back (and releases the hold).
    return waitFor();
  }
  if (host === address && current?.port === port) {
    markEndpointCondition(scope, {
      type: ClusterEndpointConditionTypes.endpointSet,
      status: 'True',
      reason: ClusterEndpointReasons.endpointSet,
      message: `${address}:${port}`,
    });
    return proceed;
  }
  // Our address with another port (respectForeignEndpoint let it through: the address is in use).
  const message =
    `Cluster.spec.controlPlaneEndpoint is ${host}:${current?.port ?? '?'}, not the claimed ${address}:${port}; it is never overwritten. ${
      clusterHold.isHeldByUs(cluster) ? 'The Cluster stays paused: clear the endpoint to get the VLAN one.' : ''
    }`.trimEnd();
  markEndpointAlreadySet(scope, message);
  return waitFor();
}

/** Postcondition: our hold is over (the endpoint is set, so Cluster API and CAPP may go on). */
export async function releaseClusterHold(scope: EndpointScope): Promise<StepOutcome> {
  try {
    await endClusterHold(scope, `control-plane endpoint ${scope.endpoint.status?.address ?? ''} set; released the pause`);
  } catch (err: unknown) {
    return failed(new Error(`release the pause of Cluster ${scope.namespace}/${scope.name}`, { cause: err }));
  }
  return proceed;
}
