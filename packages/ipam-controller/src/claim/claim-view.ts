import { CAPI_CORE_GROUP, CapiAnnotations, CapiLabels, IpamAnnotations, IpamFinalizers, type IPAddressClaim } from '@metal-l2/api';

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
