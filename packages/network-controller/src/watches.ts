import {
  CapiLabels,
  MachineNetworkType,
  PacketMachineType,
  type Cluster,
  type ClusterEndpoint,
  type IPAddress,
  type IPAddressClaim,
  type Machine,
  type MachineHealthCheck,
  type MachineNetwork,
  type MachineNetworkTemplate,
  type PacketMachine,
  type PacketMachineTemplate,
} from '@metal-l2/api';
import type { Informer, ObjectKey } from '@metal-l2/kube';
import { IndexNames } from './context.js';
import { keptRecordOf } from './machine-network/kept-claims.js';
import { templateNameFor } from './template-link.js';

// Watches, declared as data: which events of which kind wake which machine. Every key is a
// PacketMachine's namespace/name, which is also its MachineNetwork's.

export interface NetworkInformers {
  readonly packetMachines: Informer<PacketMachine>;
  readonly packetMachineTemplates: Informer<PacketMachineTemplate>;
  readonly machineNetworks: Informer<MachineNetwork>;
  readonly templates: Informer<MachineNetworkTemplate>;
  readonly claims: Informer<IPAddressClaim>;
  readonly addresses: Informer<IPAddress>;
  readonly machines?: Informer<Machine> | undefined;
  readonly clusters?: Informer<Cluster> | undefined;
  readonly healthChecks?: Informer<MachineHealthCheck> | undefined;
}

const nsOf = (obj: { metadata: { namespace?: string } }): string => obj.metadata.namespace ?? '';

/**
 * The MachineNetwork a claim belongs to, by its controller owner reference: the full name (the
 * label carries a shortened one when the name is longer than a label value may be).
 */
function machineNetworkOf(claim: IPAddressClaim): string | undefined {
  return (claim.metadata.ownerReferences ?? []).find((o) => o.controller === true && o.kind === MachineNetworkType.kind)?.name;
}

/** Indexes the reconciler and the mappings read. */
export function addIndexes(informers: NetworkInformers): void {
  informers.machines?.addIndex(IndexNames.machineByInfraRef, (m) =>
    m.spec.infrastructureRef.kind === PacketMachineType.kind ? [`${nsOf(m)}/${m.spec.infrastructureRef.name}`] : [],
  );
  informers.machines?.addIndex(IndexNames.machineByDataSecret, (m) => {
    const secret = m.spec.bootstrap.dataSecretName;
    return secret === undefined || secret === '' ? [] : [`${nsOf(m)}/${secret}`];
  });
  informers.claims.addIndex(IndexNames.claimByMachineNetwork, (c) => {
    const owner = machineNetworkOf(c);
    return owner === undefined ? [] : [`${nsOf(c)}/${owner}`];
  });
  informers.claims.addIndex(IndexNames.keptClaimByMachineNetwork, (c) => {
    const kept = keptRecordOf(c);
    return kept === undefined ? [] : [`${nsOf(c)}/${kept.machineNetwork}`];
  });
  informers.healthChecks?.addIndex(IndexNames.healthCheckByCluster, (mhc) => [`${nsOf(mhc)}/${mhc.spec.clusterName}`]);
  informers.machineNetworks.addIndex(IndexNames.machineNetworkByTemplate, (mn) => [`${nsOf(mn)}/${mn.spec.templateName}`]);
  informers.machineNetworks.addIndex(IndexNames.machineNetworkByCluster, (mn) => {
    const cluster = mn.metadata.labels?.[CapiLabels.clusterName];
    return cluster === undefined ? [] : [`${nsOf(mn)}/${cluster}`];
  });
  informers.packetMachines.addIndex(IndexNames.packetMachineByTemplate, (pm) => {
    const template = templateNameFor(pm, (namespace, name) => informers.packetMachineTemplates.get({ namespace, name }));
    return template === undefined ? [] : [`${nsOf(pm)}/${template}`];
  });
  informers.packetMachines.addIndex(IndexNames.packetMachineByCluster, (pm) => {
    const cluster = pm.metadata.labels?.[CapiLabels.clusterName];
    return cluster === undefined ? [] : [`${nsOf(pm)}/${cluster}`];
  });
}

const key = (namespace: string, name: string): ObjectKey => ({ namespace, name });
const keysOf = (objects: readonly { metadata: { namespace?: string; name?: string } }[]): ObjectKey[] =>
  objects.map((o) => key(nsOf(o), o.metadata.name ?? ''));

export interface MachineNetworkWatches {
  readonly claims: (claim: IPAddressClaim) => ObjectKey[];
  /** For the kept-address controller: a kept claim wakes its deleted MachineNetwork's key. */
  readonly keptClaims: (claim: IPAddressClaim) => ObjectKey[];
  readonly addresses: (address: IPAddress) => ObjectKey[];
  readonly machines: (machine: Machine) => ObjectKey[];
  readonly templates: (template: MachineNetworkTemplate) => ObjectKey[];
  readonly clusters: (cluster: Cluster) => ObjectKey[];
  readonly clusterEndpoints: (endpoint: ClusterEndpoint) => ObjectKey[];
}

export function machineNetworkWatches(informers: NetworkInformers): MachineNetworkWatches {
  // A claim just kept by a deletion (its owner reference gone) still wakes that deletion, which
  // waits for the cache to show the claim kept before it releases the others.
  const ofClaim = (claim: IPAddressClaim | undefined): ObjectKey[] => {
    const owner = claim === undefined ? undefined : (machineNetworkOf(claim) ?? keptRecordOf(claim)?.machineNetwork);
    return claim === undefined || owner === undefined ? [] : [key(nsOf(claim), owner)];
  };
  return {
    claims: ofClaim,
    keptClaims: (claim) => {
      const kept = keptRecordOf(claim);
      return kept === undefined ? [] : [key(nsOf(claim), kept.machineNetwork)];
    },
    addresses: (address) => ofClaim(informers.claims.get({ namespace: nsOf(address), name: address.spec.claimRef.name })),
    machines: (machine) =>
      machine.spec.infrastructureRef.kind === PacketMachineType.kind ? [key(nsOf(machine), machine.spec.infrastructureRef.name)] : [],
    templates: (template) => {
      const at = `${nsOf(template)}/${template.metadata.name ?? ''}`;
      return [
        ...keysOf(informers.machineNetworks.byIndex(IndexNames.machineNetworkByTemplate, at)),
        ...keysOf(informers.packetMachines.byIndex(IndexNames.packetMachineByTemplate, at)),
      ];
    },
    clusters: (cluster) =>
      keysOf(informers.packetMachines.byIndex(IndexNames.packetMachineByCluster, `${nsOf(cluster)}/${cluster.metadata.name ?? ''}`)),
    // A ClusterEndpoint has its Cluster's name.
    clusterEndpoints: (endpoint) =>
      keysOf(informers.packetMachines.byIndex(IndexNames.packetMachineByCluster, `${nsOf(endpoint)}/${endpoint.metadata.name ?? ''}`)),
  };
}
