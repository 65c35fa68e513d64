import { ClusterEndpointAnnotations, type Cluster, type IPAddress, type IPAddressClaim } from '@metal-l2/api';
import type { Informer, ObjectKey } from '@metal-l2/kube';
import type { ClusterEndpointTemplate } from '@metal-l2/api';

export const EndpointIndexNames = {
  /** Clusters by `namespace/<ClusterEndpointTemplate>` their annotation names. */
  clusterByEndpointTemplate: 'clusterByEndpointTemplate',
} as const;

const nsOf = (obj: { metadata: { namespace?: string } }): string => obj.metadata.namespace ?? '';

/** The Cluster an endpoint claim belongs to, by its controller owner reference. */
function clusterOf(claim: IPAddressClaim): string | undefined {
  return (claim.metadata.ownerReferences ?? []).find((o) => o.controller === true && o.kind === 'Cluster')?.name;
}

export function addEndpointIndexes(clusters: Informer<Cluster>): void {
  clusters.addIndex(EndpointIndexNames.clusterByEndpointTemplate, (c) => {
    const template = c.metadata.annotations?.[ClusterEndpointAnnotations.template];
    return template === undefined || template === '' ? [] : [`${nsOf(c)}/${template}`];
  });
}

export interface EndpointWatches {
  readonly claims: (claim: IPAddressClaim) => ObjectKey[];
  readonly addresses: (address: IPAddress) => ObjectKey[];
  readonly templates: (template: ClusterEndpointTemplate) => ObjectKey[];
}

/** Which events wake which Cluster: every key is a Cluster's namespace/name (its ClusterEndpoint's too). */
export function endpointWatches(informers: { clusters: Informer<Cluster>; claims: Informer<IPAddressClaim> }): EndpointWatches {
  const ofClaim = (claim: IPAddressClaim | undefined): ObjectKey[] => {
    const owner = claim === undefined ? undefined : clusterOf(claim);
    return claim === undefined || owner === undefined ? [] : [{ namespace: nsOf(claim), name: owner }];
  };
  return {
    claims: ofClaim,
    addresses: (address) => ofClaim(informers.claims.get({ namespace: nsOf(address), name: address.spec.claimRef.name })),
    templates: (template) =>
      informers.clusters
        .byIndex(EndpointIndexNames.clusterByEndpointTemplate, `${nsOf(template)}/${template.metadata.name ?? ''}`)
        .map((c) => ({ namespace: nsOf(c), name: c.metadata.name ?? '' })),
  };
}
