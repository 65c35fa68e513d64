import {
  CapiLabels,
  ClusterEndpointAnnotations,
  type Cluster,
  type IPAddress,
  type IPAddressClaim,
  type MachineNetwork,
} from '@metal-l2/api';
import type { CacheEvent, Informer, ObjectKey } from '@metal-l2/kube';
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
  readonly machineNetworks: (mn: MachineNetwork) => ObjectKey[];
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
    // Its Cluster (the cluster-name label), whether or not it has an endpoint: cheap, and a
    // Cluster already deleted still has a claim to let go.
    machineNetworks: (mn) => {
      const cluster = mn.metadata.labels?.[CapiLabels.clusterName];
      return cluster === undefined ? [] : [{ namespace: nsOf(mn), name: cluster }];
    },
  };
}

/**
 * The MachineNetwork events that can change whether a Cluster's VIP is announced: one added or
 * gone, its user data (the announcer record), its deletion or its Cluster label. Its other status
 * writes (many per machine) wake no Cluster.
 */
export function announcerChanged(event: CacheEvent<MachineNetwork>): boolean {
  if (event.type !== 'update') return true;
  const facts = (mn: MachineNetwork): string =>
    JSON.stringify([mn.status?.userData, mn.metadata.deletionTimestamp, mn.metadata.labels?.[CapiLabels.clusterName]]);
  return facts(event.oldObject) !== facts(event.object);
}
