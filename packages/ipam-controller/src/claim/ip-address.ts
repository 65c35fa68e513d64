import {
  CapiLabels,
  IPAM_GROUP,
  IpamFinalizers,
  apiVersionOf,
  ipAddressClaimType,
  type CapiIpamVersion,
  type IPAddress,
} from '@metal-l2/api';
import type { ClaimView } from './claim-view.js';
import { poolTypeOf, type PoolRef } from '../pool-ref.js';

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
