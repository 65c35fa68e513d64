import {
  CAPI_CORE_GROUP,
  CapiAnnotations,
  CapiLabels,
  IPAM_GROUP,
  IpamAnnotations,
  IpamFinalizers,
  apiVersionOf,
  ipAddressClaimType,
  type CapiIpamVersion,
  type ClaimReason,
  type Condition,
  type IPAddress,
  type IPAddressClaim,
  type V1Beta1Condition,
} from '@metal-l2/api';
import type { IpamContext } from '../context.js';
import { isOurPoolKind, poolTypeOf, type PoolRef } from '../pool-ref.js';

// The Cluster API IPAM contract as this provider keeps it, in one place (as in-cluster's
// ClaimHandler and ipamutil do): which IPAddressClaims are ours and what they say, whether we may
// act on one (its pause, its Cluster's pause and linkage), the IPAddress that fulfils it and the
// Ready condition we set on it. The pool pass decides addresses; claim-writes.ts sends what this
// module builds (finalizers, the IPAddress, claim status), and the pass reaches claims only
// through these two (pool/claim-decisions.ts applies its decisions with them).

// ---- Which claims are ours, and what they say ----

/**
 * The pool a claim points at, or undefined when the claim belongs to another provider (other
 * apiGroup or kind): such claims are never touched. A namespaced pool is looked up in the claim's
 * namespace, a global one has none.
 */
export function poolOfClaim(claim: {
  namespace: string;
  poolRef: { apiGroup?: string | undefined; kind: string; name: string };
}): PoolRef | undefined {
  const { apiGroup, kind, name } = claim.poolRef;
  if (apiGroup !== IPAM_GROUP || !isOurPoolKind(kind)) return undefined;
  return kind === 'InClusterIPPool' ? { kind, namespace: claim.namespace, name } : { kind, name };
}

/** The pool an IPAddress points at, or undefined when it belongs to another provider (as for claims). */
export function poolOfAddress(address: IPAddress): PoolRef | undefined {
  const { apiGroup, kind, name } = address.spec.poolRef;
  if (apiGroup !== IPAM_GROUP || !isOurPoolKind(kind)) return undefined;
  return kind === 'InClusterIPPool' ? { kind, namespace: address.metadata.namespace ?? '', name } : { kind, name };
}

/**
 * What the provider needs to know about an IPAddressClaim, the same for v1beta2 and v1beta1
 * (v1beta1 from CAPI 1.7 has no spec.clusterName: the cluster comes from the label then).
 */
export interface ClaimView {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly poolRef: { readonly apiGroup?: string | undefined; readonly kind: string; readonly name: string };
  /** spec.clusterName, else the deprecated cluster-name label. */
  readonly clusterName?: string | undefined;
  readonly clusterNameLabel?: string | undefined;
  readonly requestedAddress?: string | undefined;
  readonly isDeleting: boolean;
  readonly hasFinalizer: boolean;
  /**
   * Another controller's finalizer is on the claim (the API server's own foregroundDeletion and
   * orphan do not count): its deletion waits for it, and so does the release of its address.
   */
  readonly hasOtherFinalizers: boolean;
  /** The uid of the Cluster that owns the claim (an owner reference of kind Cluster), when one does. */
  readonly clusterUid?: string | undefined;
  readonly isPaused: boolean;
  readonly object: IPAddressClaim;
}

/** Finalizers of the API server's garbage collector: bookkeeping of the deletion itself, which never waits for the address. */
const GC_FINALIZERS: ReadonlySet<string> = new Set(['foregroundDeletion', 'orphan']);

// The cache hands out one object per claim version, and every pass over a pool views all of its
// claims: a view is made once per version.
const views = new WeakMap<IPAddressClaim, ClaimView>();

export function viewClaim(claim: IPAddressClaim): ClaimView {
  let view = views.get(claim);
  if (view === undefined) views.set(claim, (view = makeView(claim)));
  return view;
}

function makeView(claim: IPAddressClaim): ClaimView {
  const meta = claim.metadata;
  const label = meta.labels?.[CapiLabels.clusterName];
  const specCluster = claim.spec.clusterName;
  return {
    namespace: meta.namespace ?? '',
    name: meta.name ?? '',
    uid: meta.uid ?? '',
    poolRef: claim.spec.poolRef,
    clusterName: specCluster !== undefined && specCluster !== '' ? specCluster : label,
    clusterNameLabel: label,
    requestedAddress: meta.annotations?.[IpamAnnotations.requestedAddress],
    isDeleting: meta.deletionTimestamp !== undefined,
    hasFinalizer: meta.finalizers?.includes(IpamFinalizers.releaseAddress) ?? false,
    hasOtherFinalizers: (meta.finalizers ?? []).some((f) => f !== IpamFinalizers.releaseAddress && !GC_FINALIZERS.has(f)),
    clusterUid: (meta.ownerReferences ?? []).find((o) => o.kind === 'Cluster' && o.apiVersion.startsWith(`${CAPI_CORE_GROUP}/`))?.uid,
    isPaused: meta.annotations?.[CapiAnnotations.paused] !== undefined,
    object: claim,
  };
}

const keys = new WeakMap<ClaimView, string>();

/** `namespace/name`: how passes key live claims (once per view). */
export function claimKey(claim: ClaimView): string {
  let key = keys.get(claim);
  if (key === undefined) keys.set(claim, (key = `${claim.namespace}/${claim.name}`));
  return key;
}

/**
 * Values by claim namespace, then name: a pass looks claims up for every allocation and IPAddress
 * of its pool, and building `namespace/name` for each (names run to 253 characters) cost a new
 * string and its hash every time; the names themselves are the cached strings, hashed once.
 */
export class ByClaim<V> {
  private readonly namespaces = new Map<string, Map<string, V>>();

  get(namespace: string, name: string): V | undefined {
    return this.namespaces.get(namespace)?.get(name);
  }

  has(namespace: string, name: string): boolean {
    return this.namespaces.get(namespace)?.has(name) ?? false;
  }

  set(namespace: string, name: string, value: V): void {
    let names = this.namespaces.get(namespace);
    if (names === undefined) this.namespaces.set(namespace, (names = new Map<string, V>()));
    names.set(name, value);
  }
}

// ---- Whether we may act: the pause and the Cluster ----

/** What the claim's Cluster says about acting on it: the contract's pause and linkage rules. */
export type ClusterState = 'unlinked' | 'active' | 'paused' | 'missing';

/**
 * The Cluster is found by name, as the contract links it. A claim owned by a Cluster (its owner
 * reference) whose uid is not the one of that name belongs to a former Cluster, deleted and
 * created again: the new one's pause is not the claim's, and its own Cluster is missing.
 */
export function clusterStateOf(ctx: Pick<IpamContext, 'caches'>, claim: ClaimView): ClusterState {
  if (claim.clusterName === undefined) return 'unlinked';
  const cluster = ctx.caches.clusters?.get({ namespace: claim.namespace, name: claim.clusterName });
  if (cluster === undefined) return 'missing';
  if (claim.clusterUid !== undefined && cluster.metadata.uid !== claim.clusterUid) return 'missing';
  const paused = cluster.spec?.paused === true || cluster.metadata.annotations?.[CapiAnnotations.paused] !== undefined;
  return paused ? 'paused' : 'active';
}

/**
 * Whether the provider may act on the claim now. A paused claim or Cluster holds everything; a
 * missing Cluster holds allocation but not release, so deleting a claim of a deleted Cluster
 * still frees its address (the reference provider's fix for its issue #289).
 */
export function mayActOn(claim: ClaimView, cluster: ClusterState): boolean {
  if (claim.isPaused || cluster === 'paused') return false;
  if (cluster === 'missing') return claim.isDeleting;
  return true;
}

/**
 * Whether a deleting claim's address may be released now: once the provider may act on it and
 * no other controller's finalizer holds the deletion (metal3's rule; the network controller holds
 * a Cluster endpoint claim so while a machine still announces the address). Released earlier,
 * the address could go to another claim while the claim's holder still uses it.
 */
export function mayRelease(ctx: Pick<IpamContext, 'caches'>, claim: ClaimView): boolean {
  return claim.isDeleting && claim.hasFinalizer && !claim.hasOtherFinalizers && mayActOn(claim, clusterStateOf(ctx, claim));
}

// ---- The IPAddress that fulfils a claim ----

export interface IPAddressInput {
  readonly claim: ClaimView;
  readonly pool: PoolRef & { readonly uid: string };
  readonly address: string;
  readonly prefix: number;
  readonly gateway?: string | undefined;
  readonly version: CapiIpamVersion;
}

/**
 * The IPAddress fulfilling a claim, as the IPAM contract describes it: named and namespaced like
 * the claim, owned by the claim (controller) and the pool (not controller), both blocking owner
 * deletion, protected by our finalizer, carrying the claim's cluster-name label.
 */
export function buildIPAddress(input: IPAddressInput): IPAddress {
  const { claim, pool, version } = input;
  const poolType = poolTypeOf(pool.kind);
  const clusterLabel = claim.clusterNameLabel ?? claim.clusterName;
  return {
    apiVersion: apiVersionOf(ipAddressClaimType(version)),
    kind: 'IPAddress',
    metadata: {
      name: claim.name,
      namespace: claim.namespace,
      finalizers: [IpamFinalizers.protectAddress],
      ...(clusterLabel === undefined ? {} : { labels: { [CapiLabels.clusterName]: clusterLabel } }),
      ownerReferences: [
        {
          apiVersion: apiVersionOf(ipAddressClaimType(version)),
          kind: 'IPAddressClaim',
          name: claim.name,
          uid: claim.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
        {
          apiVersion: apiVersionOf(poolType),
          kind: pool.kind,
          name: pool.name,
          uid: pool.uid,
          controller: false,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      address: input.address,
      prefix: input.prefix,
      ...(input.gateway === undefined ? {} : { gateway: input.gateway }),
      claimRef: { name: claim.name },
      poolRef: { apiGroup: IPAM_GROUP, kind: pool.kind, name: pool.name },
    },
  };
}

// ---- The Ready condition (and addressRef) we set ----

/** What the provider says about a claim: bound to an address, or waiting for a reason. */
export type ClaimOutcome =
  | { readonly kind: 'bound'; readonly addressName: string; readonly address: string }
  | { readonly kind: 'waiting'; readonly reason: Exclude<ClaimReason, 'AddressAllocated'>; readonly message: string };

export interface ClaimStatusPatch {
  readonly status: { addressRef?: { name: string }; conditions: (Condition | V1Beta1Condition)[] };
}

/**
 * The status a claim should have for an outcome, or undefined when it already has it (so steady
 * state writes nothing). Only the Ready condition is ours; other conditions are kept as they are,
 * and lastTransitionTime moves only when the status flips.
 */
export function claimStatusPatch(
  claim: IPAddressClaim,
  outcome: ClaimOutcome,
  options: { version: CapiIpamVersion; now: Date },
): ClaimStatusPatch | undefined {
  const existing = claim.status?.conditions ?? [];
  const current = existing.find((c) => c.type === 'Ready');
  const status: 'True' | 'False' = outcome.kind === 'bound' ? 'True' : 'False';
  const reason = outcome.kind === 'bound' ? 'AddressAllocated' : outcome.reason;
  const message = outcome.kind === 'bound' ? `address ${outcome.address} allocated` : outcome.message;
  const addressName = outcome.kind === 'bound' ? outcome.addressName : undefined;

  const sameCondition = current?.status === status && current.reason === reason && (current.message ?? '') === message;
  const sameAddress =
    (claim.status?.addressRef?.name ?? undefined) === addressName ||
    (addressName === undefined && claim.status?.addressRef?.name === undefined);
  if (sameCondition && sameAddress) return undefined;

  const lastTransitionTime = current !== undefined && current.status === status ? current.lastTransitionTime : formatTime(options.now);
  const ready: Condition | V1Beta1Condition =
    options.version === 'v1beta2'
      ? {
          type: 'Ready',
          status,
          reason,
          message,
          lastTransitionTime,
          ...(claim.metadata.generation === undefined ? {} : { observedGeneration: claim.metadata.generation }),
        }
      : {
          type: 'Ready',
          status,
          reason,
          message,
          lastTransitionTime,
          ...(status === 'False' ? { severity: reason === 'PoolExhausted' || reason === 'PoolStatusFull' ? 'Warning' : 'Error' } : {}),
        };
  const conditions = [ready, ...existing.filter((c) => c.type !== 'Ready')];
  // An address, once given, is only taken away on deletion: a waiting outcome never clears it.
  const addressRef = addressName === undefined ? claim.status?.addressRef?.name : addressName;
  return { status: { ...(addressRef === undefined ? {} : { addressRef: { name: addressRef } }), conditions } };
}

/** Kubernetes timestamps have second precision. */
export function formatTime(now: Date): string {
  return new Date(Math.floor(now.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
