import { CapiAnnotations, CapiLabels, IpamAnnotations, IpamFinalizers, type IPAddressClaim } from '@metal-l2/api';

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
  readonly isPaused: boolean;
  readonly object: IPAddressClaim;
}

export function viewClaim(claim: IPAddressClaim): ClaimView {
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
    isPaused: meta.annotations?.[CapiAnnotations.paused] !== undefined,
    object: claim,
  };
}
