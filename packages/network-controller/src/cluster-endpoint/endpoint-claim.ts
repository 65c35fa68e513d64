import {
  CAPI_IPAM_GROUP,
  CLUSTER_ENDPOINT_LABEL,
  ClusterEndpointConditionTypes,
  ClusterEndpointEventReasons,
  ClusterEndpointReasons,
  type IPAddressClaim,
} from '@metal-l2/api';
import { apiVersionOf, isAlreadyExists, isKubeApiError } from '@metal-l2/kube';
import { endpointClaimName, nameLabelValue } from '../machine-network/claim-names.js';
import { failed, proceed, waitFor, type StepOutcome } from '../machine-network/scope.js';
import type { EndpointScope } from './context.js';
import { markEndpointCondition } from './status.js';

function ownedByCluster(claim: IPAddressClaim, scope: EndpointScope): boolean {
  return (claim.metadata.ownerReferences ?? []).some((o) => o.controller === true && o.uid === scope.cluster.metadata.uid);
}

/**
 * The endpoint claim: controller-owned by the Cluster, so owner GC releases it with the Cluster,
 * and made against the template's pool through the CAPI IPAM contract, so any IPAM provider
 * serves it. It is deliberately not linked to the Cluster (no spec.clusterName, no cluster-name
 * label): providers that follow the contract (the in-cluster provider, ours) leave the claims of
 * a paused Cluster alone, and the Cluster stays paused by our hold until this address is there.
 */
function claimObject(scope: EndpointScope, name: string): IPAddressClaim {
  const { cluster, endpoint } = scope;
  return {
    apiVersion: `${CAPI_IPAM_GROUP}/${scope.ctx.ipamVersion}`,
    kind: 'IPAddressClaim',
    metadata: {
      name,
      namespace: scope.namespace,
      labels: { [CLUSTER_ENDPOINT_LABEL]: nameLabelValue(scope.name) },
      ownerReferences: [
        {
          apiVersion: apiVersionOf(scope.ctx.types.cluster),
          kind: 'Cluster',
          name: scope.name,
          uid: cluster.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: { poolRef: { ...endpoint.spec.addressFromPool } },
  };
}

function claimProblem(scope: EndpointScope, reason: string, message: string): void {
  markEndpointCondition(scope, { type: ClusterEndpointConditionTypes.addressAllocated, status: 'False', reason, message });
}

/**
 * Postcondition: the claim `<cluster>-endpoint` exists, owned by the Cluster, and status.claimName
 * names it. A claim of that name owned by anything else is reported, never adopted.
 */
export async function ensureEndpointClaim(scope: EndpointScope): Promise<StepOutcome> {
  const { ctx } = scope;
  const name = endpointClaimName(scope.name);
  (scope.endpoint.status ??= {}).claimName = name;
  let claim = ctx.caches.claims.get({ namespace: scope.namespace, name });
  if (claim === undefined) {
    try {
      await ctx.client.create(ctx.types.claim, claimObject(scope, name), { signal: scope.rctx.signal });
      ctx.events.event(scope.endpoint, {
        type: 'Normal',
        reason: ClusterEndpointEventReasons.claimCreated,
        message: `created IPAddressClaim ${name}`,
      });
      return proceed;
    } catch (err: unknown) {
      if (!isAlreadyExists(err)) {
        claimProblem(
          scope,
          ClusterEndpointReasons.claimRefused,
          `the API server refused to create IPAddressClaim ${scope.namespace}/${name}: ${isKubeApiError(err) ? err.message : String(err)}`,
        );
        return failed(new Error(`create IPAddressClaim ${scope.namespace}/${name}`, { cause: err }));
      }
      claim = await ctx.client.get<IPAddressClaim>(ctx.types.claim, { namespace: scope.namespace, name }, { signal: scope.rctx.signal });
      if (claim === undefined) return waitFor(1_000);
    }
  }
  if (!ownedByCluster(claim, scope)) {
    claimProblem(
      scope,
      ClusterEndpointReasons.claimConflict,
      `IPAddressClaim ${scope.namespace}/${name} exists but is not owned by Cluster ${scope.name}; delete or rename it`,
    );
    return waitFor();
  }
  return proceed;
}

/**
 * Postcondition: the claim is bound and status has the address, its prefix, the port and the
 * virtual router id. Until then the endpoint waits and says for what (an exhausted pool by name).
 */
export function waitForEndpointAddress(scope: EndpointScope): Promise<StepOutcome> {
  const { ctx, endpoint } = scope;
  const status = (endpoint.status ??= {});
  const name = status.claimName ?? endpointClaimName(scope.name);
  const claim = ctx.caches.claims.get({ namespace: scope.namespace, name });
  const addressName = claim?.status?.addressRef?.name;
  const address =
    addressName === undefined || addressName === ''
      ? undefined
      : ctx.caches.addresses.get({ namespace: scope.namespace, name: addressName });
  if (endpoint.spec.port !== undefined) status.port = endpoint.spec.port;
  if (endpoint.spec.virtualRouterID !== undefined) status.virtualRouterID = endpoint.spec.virtualRouterID;
  if (address === undefined || address.spec.claimRef.name !== name) {
    const ready = claim?.status?.conditions?.find((c) => c.type === 'Ready' && c.status !== 'True');
    const pool = endpoint.spec.addressFromPool;
    claimProblem(
      scope,
      ready?.reason === 'PoolExhausted' ? ClusterEndpointReasons.poolExhausted : ClusterEndpointReasons.waitingForAddress,
      `waiting for IPAddressClaim ${name} (pool ${pool.kind}/${pool.name}${ready?.reason === undefined ? '' : `: ${ready.reason}${ready.message === undefined ? '' : `, ${ready.message}`}`})`,
    );
    return Promise.resolve(waitFor());
  }
  status.address = address.spec.address;
  status.prefix = address.spec.prefix;
  markEndpointCondition(scope, {
    type: ClusterEndpointConditionTypes.addressAllocated,
    status: 'True',
    reason: ClusterEndpointReasons.addressAllocated,
    message: `${address.spec.address}/${address.spec.prefix} on VLAN ${endpoint.spec.vxlan}`,
  });
  return Promise.resolve(proceed);
}
