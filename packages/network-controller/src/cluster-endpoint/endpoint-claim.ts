import {
  CAPI_IPAM_GROUP,
  CLUSTER_ENDPOINT_LABEL,
  CapiLabels,
  ClusterEndpointConditionTypes,
  ClusterEndpointEventReasons,
  ClusterEndpointReasons,
  type IPAddress,
  type IPAddressClaim,
} from '@metal-l2/api';
import { apiVersionOf, isAlreadyExists, isKubeApiError } from '@metal-l2/kube';
import { endpointClaimName, nameLabelValue } from '../machine-network/claim-names.js';
import { failed, proceed, waitFor, type StepOutcome } from '../machine-network/scope.js';
import type { EndpointScope } from './context.js';
import { markEndpointCondition } from './status.js';

export function ownedByCluster(claim: IPAddressClaim, scope: Pick<EndpointScope, 'cluster'>): boolean {
  return (claim.metadata.ownerReferences ?? []).some((o) => o.controller === true && o.uid === scope.cluster.metadata.uid);
}

/** The IPAddress the claim is bound to (its status.addressRef), when the cache has both. */
export function boundAddress(scope: Pick<EndpointScope, 'ctx' | 'namespace'>, claim: IPAddressClaim | undefined): IPAddress | undefined {
  const name = claim?.status?.addressRef?.name;
  if (claim === undefined || name === undefined || name === '') return undefined;
  const address = scope.ctx.caches.addresses.get({ namespace: scope.namespace, name });
  return address?.spec.claimRef.name === claim.metadata.name ? address : undefined;
}

/**
 * The endpoint claim: controller-owned by the Cluster, so owner GC releases it with the Cluster,
 * and made against the template's pool through the CAPI IPAM contract, so any IPAM provider
 * serves it. It is made unlinked (no cluster-name label): providers that follow the contract (the
 * in-cluster provider, ours) leave the claims of a paused Cluster alone, and the Cluster stays
 * paused by our hold until this address is there. linkEndpointClaim links it once it is bound.
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

/** How often a claim name taken by someone else's claim is looked at again. */
export const CONFLICT_RECHECK_MS = 5_000;

/** How long a claim may go unanswered before a held Cluster says so (a provider usually answers in milliseconds). */
export const UNANSWERED_CLAIM_QUIET_MS = 10_000;

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
    // Not ours, so not in our informer (it watches our label only): its deletion would not wake us.
    return waitFor(CONFLICT_RECHECK_MS);
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
  const address = boundAddress(scope, claim);
  if (endpoint.spec.port !== undefined) status.port = endpoint.spec.port;
  if (endpoint.spec.virtualRouterID !== undefined) status.virtualRouterID = endpoint.spec.virtualRouterID;
  if (address === undefined) {
    const ready = claim?.status?.conditions?.find((c) => c.type === 'Ready' && c.status !== 'True');
    const pool = endpoint.spec.addressFromPool;
    const said =
      ready?.reason === undefined
        ? 'no IPAM provider has answered it yet: is one installed for this pool kind?'
        : `${ready.reason}${ready.message === undefined ? '' : `, ${ready.message}`}`;
    claimProblem(scope, waitingReasonOf(ready?.reason), `waiting for IPAddressClaim ${name} (pool ${pool.kind}/${pool.name}: ${said})`);
    if (ready?.reason !== undefined) return Promise.resolve(waitFor());
    // A claim no provider answered yet is normal for a moment; past that it is worth saying.
    const age = claim?.metadata.creationTimestamp === undefined ? 0 : scope.now.getTime() - Date.parse(claim.metadata.creationTimestamp);
    if (age >= UNANSWERED_CLAIM_QUIET_MS) return Promise.resolve(waitFor());
    scope.quiet = true;
    return Promise.resolve(waitFor(UNANSWERED_CLAIM_QUIET_MS - age));
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

/** The claim's own reason, where it names one the user acts on; else WaitingForAddress. */
function waitingReasonOf(claimReason: string | undefined): string {
  if (claimReason === 'PoolExhausted') return ClusterEndpointReasons.poolExhausted;
  if (claimReason === 'PoolNotReady') return ClusterEndpointReasons.poolNotReady;
  return ClusterEndpointReasons.waitingForAddress;
}

/**
 * Postcondition: a bound claim carries the cluster-name label. Linked, a Cluster paused by
 * clusterctl move pauses its claim too, on the source and on the target: the target's IPAM
 * provider then leaves the copied claim (which arrives without status, before its IPAddress)
 * alone instead of giving it a second address, and recovers the allocation from the copied
 * IPAddress. Made unlinked while our hold is on (see claimObject); linked before it ends.
 */
export async function linkEndpointClaim(scope: EndpointScope): Promise<StepOutcome> {
  const name = scope.endpoint.status?.claimName ?? endpointClaimName(scope.name);
  const claim = scope.ctx.caches.claims.get({ namespace: scope.namespace, name });
  if (claim === undefined || claim.metadata.labels?.[CapiLabels.clusterName] === scope.name) return proceed;
  try {
    await scope.ctx.client.patch(
      scope.ctx.types.claim,
      { namespace: scope.namespace, name },
      { metadata: { labels: { [CapiLabels.clusterName]: scope.name } } },
      { signal: scope.rctx.signal },
    );
  } catch (err: unknown) {
    return failed(new Error(`link IPAddressClaim ${scope.namespace}/${name} to its Cluster`, { cause: err }));
  }
  return proceed;
}
