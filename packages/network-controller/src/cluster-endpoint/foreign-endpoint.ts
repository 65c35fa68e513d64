import {
  ClusterEndpointConditionTypes,
  ClusterEndpointEventReasons,
  ClusterEndpointReasons,
  ClusterEndpointType,
  type Cluster,
  type ClusterEndpoint,
} from '@metal-l2/api';
import { failed, getCondition, proceed, type ReconcileContext, type StepOutcome, waitFor } from '@metal-l2/kube';
import { endpointClaimName } from '../machine-network/claim-names.js';
import type { EndpointContext, EndpointScope } from './context.js';
import { addressUseOf, describeUse, type AddressUse } from './address-in-use.js';
import { boundAddress, ownedByCluster, runsOnOwnAddress } from './endpoint-claim.js';
import { clusterHold, endClusterHold } from '../hold.js';
import { markAddressInUse, markEndpointAlreadySet, markEndpointCondition } from './status.js';

/** Deletes the Cluster's endpoint claim (its IPAM provider gives the address back); true when there was one. */
async function dropClaim(scope: Pick<EndpointScope, 'ctx' | 'rctx' | 'namespace' | 'name' | 'cluster'>, why: string): Promise<boolean> {
  const name = endpointClaimName(scope.name);
  const claim = scope.ctx.caches.claims.get({ namespace: scope.namespace, name });
  if (claim === undefined || claim.metadata.deletionTimestamp !== undefined || !ownedByCluster(claim, scope)) return false;
  await scope.ctx.client.delete(scope.ctx.types.claim, { namespace: scope.namespace, name }, { signal: scope.rctx.signal });
  scope.ctx.events.event(scope.cluster, {
    type: 'Normal',
    reason: ClusterEndpointEventReasons.claimReleased,
    message: `deleted IPAddressClaim ${name}: ${why}`,
  });
  return true;
}

/**
 * Precondition of claiming: the Cluster's endpoint, if it has one, is ours. Another one (set by
 * hand, or copied by Cluster API before us) is the user's choice and is never overwritten: no
 * address stays claimed for it once no machine announces it, our hold ends, and new machines get
 * no announcer. Ours is known from a bound claim, or from status.address when the claim went (it
 * is made again for that address); a claim not bound yet on a Cluster we do not hold (a moved or
 * restored Cluster, its IPAddress not read back yet) is never dropped on a guess.
 */
export async function respectForeignEndpoint(scope: EndpointScope): Promise<StepOutcome> {
  const { cluster } = scope;
  const current = cluster.spec?.controlPlaneEndpoint;
  const host = current?.host ?? '';
  if (host === '' || runsOnOwnAddress(scope) !== undefined) return proceed;
  const claim = scope.ctx.caches.claims.get({ namespace: scope.namespace, name: endpointClaimName(scope.name) });
  const address = boundAddress(scope, claim)?.spec.address;
  if (address === host) return proceed;
  const held = clusterHold.isHeldByUs(cluster);
  if (claim !== undefined && address === undefined && !held) return proceed;
  const endpoint = `${host}:${current?.port ?? '?'}`;
  if (claim !== undefined && address !== undefined) {
    const use = addressUseOf(scope.ctx.caches, { claim, clusterName: scope.name, address });
    if (use.inUse) return keepAnnouncedAddress(scope, use, endpoint);
  }
  const message = `Cluster.spec.controlPlaneEndpoint is ${endpoint}, not an address of pool ${scope.endpoint.spec.addressFromPool.name}; it is never overwritten, no address is claimed for it and its control-plane machines get no VIP announcer. For the VLAN endpoint instead, pause the Cluster and clear it (a paused Cluster without an endpoint gets ours); to silence this, remove the annotation network.metal.x-k8s.io/endpoint-template.`;
  try {
    await dropClaim(scope, `the Cluster's endpoint is ${endpoint}`);
    // Also clears a hold reason left on a Cluster we never held (its template was missing).
    await endClusterHold(scope, `control-plane endpoint ${endpoint} set by someone else; released the pause`);
  } catch (err: unknown) {
    return failed(new Error(`give up the endpoint claim of Cluster ${scope.namespace}/${scope.name}`, { cause: err }));
  }
  const status = (scope.endpoint.status ??= {});
  delete status.address;
  delete status.prefix;
  delete status.claimName;
  markEndpointAlreadySet(scope, message, [ClusterEndpointConditionTypes.addressAllocated, ClusterEndpointConditionTypes.endpointSet]);
  return waitFor();
}

/**
 * The Cluster runs with another endpoint, but machines given the announcer of our address may
 * still hold it: the claim and status.address stay (new control planes get no announcer: their
 * Cluster's endpoint is not status.address) and the ClusterEndpoint says what gives it back. A
 * MachineNetwork's change wakes the Cluster, and the claim goes once none announces it.
 */
async function keepAnnouncedAddress(scope: EndpointScope, use: AddressUse, endpoint: string): Promise<StepOutcome> {
  try {
    await endClusterHold(scope, `control-plane endpoint ${endpoint} set by someone else; released the pause`);
  } catch (err: unknown) {
    return failed(new Error(`release the pause of Cluster ${scope.namespace}/${scope.name}`, { cause: err }));
  }
  markAddressInUse(
    scope,
    `${use.address} stays claimed although Cluster.spec.controlPlaneEndpoint is ${endpoint}: ${describeUse(use)}. To give it back, roll out the control plane (e.g. set the KubeadmControlPlane's spec.rolloutAfter) so that no machine announces it (new machines get no announcer), or delete the Cluster; to run on it again, set the endpoint back to ${use.address}`,
  );
  const message = `Cluster.spec.controlPlaneEndpoint is ${endpoint}, not the claimed ${use.address}; it is never overwritten, and new control-plane machines get no VIP announcer`;
  markEndpointAlreadySet(scope, message);
  return waitFor();
}

/**
 * The annotation removed (to keep an endpoint set by hand, or to give up waiting): our hold ends
 * and what we made for the Cluster goes, unless its address is in use: the endpoint the Cluster
 * runs with (then both stay, owned by the Cluster, and go with it), or announced by its machines
 * (both stay until none does; a MachineNetwork's change wakes the Cluster).
 */
export async function unlinkCluster(at: {
  ctx: EndpointContext;
  rctx: ReconcileContext;
  cluster: Cluster;
  endpoint: ClusterEndpoint | undefined;
}): Promise<void> {
  const { ctx, rctx, cluster } = at;
  await endClusterHold(at, 'no ClusterEndpointTemplate linked any more; released the pause');
  const namespace = cluster.metadata.namespace ?? '';
  const name = cluster.metadata.name ?? '';
  const scope = { ctx, rctx, namespace, name, cluster };
  const claim = ctx.caches.claims.get({ namespace, name: endpointClaimName(name) });
  const address = boundAddress(scope, claim)?.spec.address;
  const use = claim === undefined || address === undefined ? undefined : addressUseOf(ctx.caches, { claim, clusterName: name, address });
  if (use?.isClusterEndpoint === true) {
    await noteKept(at, {
      reason: ClusterEndpointReasons.unlinked,
      message: `the Cluster links no ClusterEndpointTemplate any more but runs on ${use.address}: the claim stays while it does and goes with the Cluster; new control-plane machines still get the announcer while the Cluster runs on it`,
    });
    return;
  }
  if (use?.inUse === true) {
    await noteKept(at, {
      reason: ClusterEndpointReasons.addressInUse,
      message: `the Cluster links no ClusterEndpointTemplate any more, but ${use.address} stays claimed: ${describeUse(use)}. To give it back, roll out the control plane so that no machine announces it (new machines get no announcer), or delete the Cluster`,
    });
    return;
  }
  await dropClaim(scope, 'the Cluster links no ClusterEndpointTemplate any more');
  if (at.endpoint !== undefined && at.endpoint.metadata.deletionTimestamp === undefined) {
    await ctx.client.delete(ClusterEndpointType, { namespace, name }, { signal: rctx.signal });
    rctx.logger.info('deleted the ClusterEndpoint of an unlinked Cluster');
  }
}

/** Says on the ClusterEndpoint why it and its claim stay after the unlinking (once per reason and message, with an Event). */
async function noteKept(
  at: { ctx: EndpointContext; rctx: ReconcileContext; endpoint: ClusterEndpoint | undefined },
  why: { reason: string; message: string },
): Promise<void> {
  const { endpoint } = at;
  if (endpoint === undefined) return;
  const ready = getCondition(endpoint.status?.conditions, ClusterEndpointConditionTypes.ready);
  if (ready?.reason === why.reason && ready.message === why.message) return;
  const working = { endpoint: structuredClone(endpoint), now: at.ctx.now() };
  markEndpointCondition(working, { type: ClusterEndpointConditionTypes.ready, status: 'False', ...why });
  if (why.reason === ClusterEndpointReasons.addressInUse)
    at.ctx.events.event(endpoint, { type: 'Warning', reason: ClusterEndpointEventReasons.addressInUse, message: why.message });
  await at.ctx.client.patchStatus(
    ClusterEndpointType,
    { namespace: endpoint.metadata.namespace ?? '', name: endpoint.metadata.name ?? '' },
    { status: { conditions: working.endpoint.status?.conditions ?? [] } },
    { signal: at.rctx.signal },
  );
}
