import {
  CAPI_IPAM_GROUP,
  CLUSTER_ENDPOINT_LABEL,
  CapiLabels,
  ClaimReasons,
  ClusterEndpointConditionTypes,
  ClusterEndpointEventReasons,
  ClusterEndpointFinalizers,
  ClusterEndpointReasons,
  IpamAnnotations,
  type IPAddress,
  type IPAddressClaim,
} from '@metal-l2/api';
import { apiVersionOf, failed, isAlreadyExists, isKubeApiError, proceed, type StepOutcome, waitFor } from '@metal-l2/kube';
import { endpointClaimName, nameLabelValue } from '../machine-network/claim-names.js';
import { addressUseOf, announcersOf, describeUse, listNames } from './address-in-use.js';
import type { EndpointScope } from './context.js';
import { markAddressInUse, markEndpointCondition } from './status.js';

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
 * Our finalizer holds its deletion while the address is in use (claim-finalizer.ts). A Cluster
 * that runs on the address its ClusterEndpoint had (its claim went) asks for that very address
 * again, with the requested-address annotation our provider honours.
 */
function claimObject(scope: EndpointScope, name: string): IPAddressClaim {
  const { cluster, endpoint } = scope;
  const runsOn = runsOnOwnAddress(scope);
  return {
    apiVersion: `${CAPI_IPAM_GROUP}/${scope.ctx.ipamVersion}`,
    kind: 'IPAddressClaim',
    metadata: {
      name,
      namespace: scope.namespace,
      labels: { [CLUSTER_ENDPOINT_LABEL]: nameLabelValue(scope.name) },
      ...(runsOn === undefined ? {} : { annotations: { [IpamAnnotations.requestedAddress]: runsOn } }),
      finalizers: [ClusterEndpointFinalizers.endpointInUse],
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

/** The address the Cluster runs on when it is the one its ClusterEndpoint claimed (status.address). */
export function runsOnOwnAddress(scope: Pick<EndpointScope, 'cluster' | 'endpoint'>): string | undefined {
  const address = scope.endpoint.status?.address;
  return address !== undefined && address === scope.cluster.spec?.controlPlaneEndpoint?.host ? address : undefined;
}

/** The uid of the former Cluster of this name that owns the claim (deleted, then created again), if it is one. */
function formerClusterUid(claim: IPAddressClaim, scope: Pick<EndpointScope, 'cluster' | 'name'>): string | undefined {
  const owner = (claim.metadata.ownerReferences ?? []).find((o) => o.controller === true && o.kind === 'Cluster');
  return owner !== undefined && owner.name === scope.name && owner.uid !== scope.cluster.metadata.uid ? owner.uid : undefined;
}

/**
 * The claim of this name belongs to a former Cluster of the same name: owner garbage collection
 * deletes it and its IPAM provider releases it (ours does although this Cluster of the same name
 * is paused: the claim's Cluster is the former one). Not a conflict: nothing for the user to do.
 * It carries our label, so its going wakes this Cluster.
 */
function waitForFormerClaim(scope: EndpointScope, claim: IPAddressClaim, formerUid: string): StepOutcome {
  const name = claim.metadata.name ?? '';
  const address = boundAddress(scope, claim)?.spec.address;
  const announcers =
    address === undefined ? [] : announcersOf(scope.ctx.caches, { namespace: scope.namespace, clusterName: scope.name }, address);
  const kept =
    announcers.length === 0
      ? ''
      : `; it keeps ${address ?? ''} while the machines of MachineNetworks ${listNames(announcers)} may announce it`;
  claimProblem(
    scope,
    ClusterEndpointReasons.waitingForFormerClaim,
    `IPAddressClaim ${scope.namespace}/${name} belongs to a former Cluster ${scope.name} (uid ${formerUid}) and goes with it${kept}; a fresh claim is made once it is gone`,
  );
  return waitFor();
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
  const formerUid = ownedByCluster(claim, scope) ? undefined : formerClusterUid(claim, scope);
  if (formerUid !== undefined) return waitForFormerClaim(scope, claim, formerUid);
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
 * A claim made again for the address the Cluster runs on is never bound to another one.
 */
export function waitForEndpointAddress(scope: EndpointScope): Promise<StepOutcome> {
  const { ctx, endpoint } = scope;
  const status = (endpoint.status ??= {});
  const name = status.claimName ?? endpointClaimName(scope.name);
  const claim = ctx.caches.claims.get({ namespace: scope.namespace, name });
  const address = boundAddress(scope, claim);
  if (endpoint.spec.port !== undefined) status.port = endpoint.spec.port;
  if (endpoint.spec.virtualRouterID !== undefined) status.virtualRouterID = endpoint.spec.virtualRouterID;
  const lost = lostAddress(scope, claim, address);
  if (lost !== undefined) {
    claimProblem(scope, ClusterEndpointReasons.addressLost, lost);
    return Promise.resolve(waitFor());
  }
  if (address === undefined) return Promise.resolve(reportUnbound(scope, claim, name));
  status.address = address.spec.address;
  status.prefix = address.spec.prefix;
  const use =
    claim?.metadata.deletionTimestamp === undefined
      ? undefined
      : addressUseOf(ctx.caches, { claim, clusterName: scope.name, address: address.spec.address });
  if (use?.inUse === true) {
    markAddressInUse(
      scope,
      `IPAddressClaim ${name} was deleted, but ${address.spec.address} stays claimed: ${describeUse(use)}. The claim is kept (finalizer ${ClusterEndpointFinalizers.endpointInUse}) until neither holds; to give the address back, set another spec.controlPlaneEndpoint on the Cluster and roll out its control plane so that no machine announces it, or delete the Cluster`,
    );
    return Promise.resolve(proceed);
  }
  markEndpointCondition(scope, {
    type: ClusterEndpointConditionTypes.addressAllocated,
    status: 'True',
    reason: ClusterEndpointReasons.addressAllocated,
    message: `${address.spec.address}/${address.spec.prefix} on VLAN ${endpoint.spec.vxlan}`,
  });
  return Promise.resolve(proceed);
}

/**
 * The claim asked again for the address the Cluster runs on (its former claim went) and did not
 * get it: bound to another one (its IPAM provider ignores the requested-address annotation) or
 * refused (the address is allocated to another claim). What happened, or undefined.
 */
function lostAddress(scope: EndpointScope, claim: IPAddressClaim | undefined, bound: IPAddress | undefined): string | undefined {
  const requested = claim?.metadata.annotations?.[IpamAnnotations.requestedAddress];
  const host = scope.cluster.spec?.controlPlaneEndpoint?.host;
  if (claim === undefined || requested === undefined || requested !== host) return undefined;
  const refused = claim.status?.conditions?.find(
    (c) => c.type === 'Ready' && c.status === 'False' && c.reason === ClaimReasons.allocationFailed,
  );
  const got = bound === undefined ? undefined : bound.spec.address;
  if (got === requested || (got === undefined && refused === undefined)) return undefined;
  const what =
    got === undefined
      ? `refused it (${refused?.message ?? 'AllocationFailed'})`
      : `gave ${got} instead (it does not honour ${IpamAnnotations.requestedAddress})`;
  return `the Cluster runs on ${requested}, the address this ClusterEndpoint had, but its claim went and IPAddressClaim ${claim.metadata.name ?? ''} made again for it was not given it: the IPAM provider ${what}. ${requested} may be handed to another claim; free it in the pool and delete IPAddressClaim ${claim.metadata.name ?? ''} to claim it again`;
}

/** A claim not bound yet: why, with the claim's own reason (an unanswered claim is said only after a quiet moment). */
function reportUnbound(scope: EndpointScope, claim: IPAddressClaim | undefined, name: string): StepOutcome {
  const ready = claim?.status?.conditions?.find((c) => c.type === 'Ready' && c.status !== 'True');
  const pool = scope.endpoint.spec.addressFromPool;
  const said =
    ready?.reason === undefined
      ? 'no IPAM provider has answered it yet: is one installed for this pool kind?'
      : `${ready.reason}${ready.message === undefined ? '' : `, ${ready.message}`}`;
  claimProblem(scope, waitingReasonOf(ready?.reason), `waiting for IPAddressClaim ${name} (pool ${pool.kind}/${pool.name}: ${said})`);
  if (ready?.reason !== undefined) return waitFor();
  // A claim no provider answered yet is normal for a moment; past that it is worth saying.
  const age = claim?.metadata.creationTimestamp === undefined ? 0 : scope.now.getTime() - Date.parse(claim.metadata.creationTimestamp);
  if (age >= UNANSWERED_CLAIM_QUIET_MS) return waitFor();
  scope.quiet = true;
  return waitFor(UNANSWERED_CLAIM_QUIET_MS - age);
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
  if (
    claim === undefined ||
    claim.metadata.deletionTimestamp !== undefined ||
    claim.metadata.labels?.[CapiLabels.clusterName] === scope.name
  )
    return proceed;
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
