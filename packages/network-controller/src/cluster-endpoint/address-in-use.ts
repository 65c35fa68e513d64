import { CapiLabels, type Cluster, type IPAddressClaim, type MachineNetwork } from '@metal-l2/api';
import { IndexNames } from '../context.js';
import type { EndpointCaches } from './context.js';

// When the endpoint address may be given back: the one rule every path that lets the claim go
// (the Cluster's own endpoint set, the annotation removed, the claim deleted, the Cluster deleted)
// asks. Giving the VIP to another Cluster while a machine still announces it makes two clusters
// answer on one address.

/** A control plane: CAPI's label on its Machine, or on the PacketMachine (KCP labels the infrastructure machines it clones too). */
function isControlPlane(caches: Pick<EndpointCaches, 'machines' | 'packetMachines'>, mn: MachineNetwork): boolean {
  const namespace = mn.metadata.namespace ?? '';
  const name = mn.metadata.name ?? '';
  const machine = caches.machines?.byIndex(IndexNames.machineByInfraRef, `${namespace}/${name}`)[0];
  if (machine?.metadata.labels?.[CapiLabels.controlPlane] !== undefined) return true;
  return caches.packetMachines.get({ namespace, name })?.metadata.labels?.[CapiLabels.controlPlane] !== undefined;
}

/**
 * Whether the machine of this MachineNetwork may announce `address`: its injected user data
 * carries the announcer of that address (status.userData.announcedEndpoint). A control plane whose
 * user data was injected (a hash) with no record of what it was given (no fingerprint) is counted
 * too: a release that kept no record may have given it the announcer, and only a machine known not
 * to announce is let go.
 */
function mayAnnounce(caches: Pick<EndpointCaches, 'machines' | 'packetMachines'>, mn: MachineNetwork, address: string): boolean {
  const userData = mn.status?.userData;
  if (userData?.hash === undefined) return false;
  if (userData.announcedEndpoint !== undefined) return userData.announcedEndpoint.address === address;
  // A recorded fingerprint says what the machine was given: no announcedEndpoint means none. Only a
  // control plane injected by a release that recorded nothing (not yet filled in) may announce unseen.
  if (userData.fingerprint !== undefined) return false;
  return isControlPlane(caches, mn);
}

/** The MachineNetworks (by name, sorted) of the Cluster's machines that may announce `address`; a deleting one counts until it is gone. */
export function announcersOf(
  caches: Pick<EndpointCaches, 'machineNetworks' | 'machines' | 'packetMachines'>,
  at: { readonly namespace: string; readonly clusterName: string },
  address: string,
): string[] {
  return caches.machineNetworks
    .byIndex(IndexNames.machineNetworkByCluster, `${at.namespace}/${at.clusterName}`)
    .filter((mn) => mayAnnounce(caches, mn, address))
    .map((mn) => mn.metadata.name ?? '')
    .sort();
}

/** Why an endpoint address must stay claimed; `inUse` false when nothing holds it. */
export interface AddressUse {
  readonly address: string;
  /** The claim's own Cluster (not deleting) runs with it as spec.controlPlaneEndpoint.host. */
  readonly isClusterEndpoint: boolean;
  /** MachineNetworks whose machines may announce it. */
  readonly announcers: readonly string[];
  readonly inUse: boolean;
}

/** The claim's Cluster, when the Cluster of that name is the one that owns it (same uid). */
export function ownerCluster(caches: Pick<EndpointCaches, 'clusters'>, claim: IPAddressClaim): Cluster | undefined {
  const owner = (claim.metadata.ownerReferences ?? []).find((o) => o.controller === true && o.kind === 'Cluster');
  if (owner === undefined) return undefined;
  const cluster = caches.clusters.get({ namespace: claim.metadata.namespace ?? '', name: owner.name });
  return cluster?.metadata.uid === owner.uid ? cluster : undefined;
}

/**
 * How `address`, claimed by `claim`, is in use: the endpoint of the claim's own Cluster (a
 * control plane created later gets its announcer), or announced by a machine of the Cluster of
 * that name. A Cluster being deleted creates no machine: only its announcers count then.
 */
export function addressUseOf(
  caches: Pick<EndpointCaches, 'clusters' | 'machineNetworks' | 'machines' | 'packetMachines'>,
  at: { readonly claim: IPAddressClaim; readonly clusterName: string; readonly address: string },
): AddressUse {
  const cluster = ownerCluster(caches, at.claim);
  const isClusterEndpoint =
    cluster !== undefined && cluster.metadata.deletionTimestamp === undefined && cluster.spec?.controlPlaneEndpoint?.host === at.address;
  const announcers = announcersOf(caches, { namespace: at.claim.metadata.namespace ?? '', clusterName: at.clusterName }, at.address);
  return { address: at.address, isClusterEndpoint, announcers, inUse: isClusterEndpoint || announcers.length > 0 };
}

/** `a, b and 3 more`: machine names for a message, bounded. */
export function listNames(names: readonly string[], max = 5): string {
  const shown = names.slice(0, max).join(', ');
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

/** `machines a, b`, or `the Cluster's endpoint`: what holds an address in use, for messages. */
export function describeUse(use: { readonly isClusterEndpoint: boolean; readonly announcers: readonly string[] }): string {
  const parts: string[] = [];
  if (use.isClusterEndpoint) parts.push("it is the Cluster's control-plane endpoint");
  if (use.announcers.length > 0)
    parts.push(`the machines of MachineNetworks ${listNames(use.announcers)} were given its announcer (keepalived, VRRP) and may hold it`);
  return parts.join(', and ');
}
