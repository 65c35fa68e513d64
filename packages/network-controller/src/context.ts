import type { MetalStreak } from './machine-network/port-driver.js';
import type {
  CapiCoreVersion,
  CapiIpamVersion,
  Cluster,
  ClusterEndpoint,
  IPAddress,
  IPAddressClaim,
  Machine,
  MachineHealthCheck,
  MachineNetwork,
  MachineNetworkTemplate,
  PacketCluster,
  PacketMachine,
  PacketMachineTemplate,
  ResourceType,
} from '@metal-l2/api';
import type { KubeClient, Logger, ObjectKey, OwnWrites } from '@metal-l2/kube';
import type { MetalClients } from '@metal-l2/metal-api';
import type { VlanCache } from './metal/machine-metal.js';

/** The read side the reconciler uses: informer caches with the indexes declared in watches.ts. */
export interface ObjectCache<T> {
  get(key: ObjectKey): T | undefined;
  byIndex(name: string, value: string): T[];
}

export interface NetworkCaches {
  readonly packetMachines: ObjectCache<PacketMachine>;
  readonly packetMachineTemplates: ObjectCache<PacketMachineTemplate>;
  readonly packetClusters: ObjectCache<PacketCluster>;
  readonly machineNetworks: ObjectCache<MachineNetwork>;
  readonly templates: ObjectCache<MachineNetworkTemplate>;
  readonly claims: ObjectCache<IPAddressClaim>;
  readonly addresses: ObjectCache<IPAddress>;
  /** Absent when the server serves no CAPI core kinds (then no Machine can exist). */
  readonly machines?: ObjectCache<Machine> | undefined;
  readonly clusters?: ObjectCache<Cluster> | undefined;
  readonly healthChecks?: ObjectCache<MachineHealthCheck> | undefined;
  /** The Clusters' endpoints, for control-plane machines' VIP announcer (absent without CAPI core kinds). */
  readonly clusterEndpoints?: ObjectCache<ClusterEndpoint> | undefined;
}

export interface EventSink {
  event(
    obj: { apiVersion?: string; kind?: string; metadata: { name?: string; namespace?: string; uid?: string } },
    event: { type: 'Normal' | 'Warning'; reason: string; message: string },
  ): void;
}

/** Where a machine's Metal API token comes from when its template names no Secret. */
export interface DefaultCredentials {
  readonly namespace: string;
  readonly name: string;
}

/** Tuning of the flow; flags in main.ts, shorter values in tests. */
export interface NetworkTimings {
  /** How long a machine may stay held (paused by us) before HoldTimeout is reported. */
  readonly holdTimeoutMs: number;
  /** How long bare-metal provisioning takes, for the MachineHealthCheck warning. */
  readonly provisioningEstimateMs: number;
  /** First look at a VLAN batch after creating it, then between looks. */
  readonly batchPollMs: number;
  /** Waiting for the device or the boot script's user-state event. */
  readonly devicePollMs: number;
  /** After a Metal error, before trying again; doubles with each failure in a row (error-policy). */
  readonly metalRetryMs: number;
  /** The cap of that backoff. */
  readonly metalRetryMaxMs: number;
  /** How often the Machine is woken again while Cluster API has not adopted the unpaused PacketMachine. */
  readonly wakeIntervalMs: number;
  /** How often a configured machine's device is read again to find changes made outside the controller (jittered). */
  readonly driftCheckMs: number;
  /** How long a layer-2 mode waits for the boot script's "metadata captured" before reporting BootScriptTimeout. */
  readonly bootScriptTimeoutMs: number;
}

/** Everything the MachineNetwork reconciler needs from outside, handed in by start.ts (or a test). */
export interface NetworkContext {
  readonly client: KubeClient;
  readonly versions: { readonly ipam: CapiIpamVersion; readonly core: CapiCoreVersion | undefined };
  readonly types: { readonly claim: ResourceType; readonly address: ResourceType; readonly machine: ResourceType | undefined };
  readonly caches: NetworkCaches;
  readonly events: EventSink;
  readonly logger: Logger;
  readonly now: () => Date;
  readonly metal: MetalClients;
  readonly vlans: VlanCache;
  readonly defaultCredentials?: DefaultCredentials | undefined;
  /** The metadata URL the boot script reads (Metal's metadata host; the simulator in tests). */
  readonly metadataUrl: string;
  /** The image Ignition control planes run their endpoint announcer (keepalived) from; none: they are refused. */
  readonly announcerImage: string | undefined;
  readonly timings: NetworkTimings;
  /** Our own latest MachineNetwork writes, ahead of the informer. */
  readonly ownWrites: OwnWrites<MachineNetwork>;
  /** When each pending VLAN batch (by id) was started or last polled, in ms. */
  readonly batchChecks: Map<string, number>;
  /** Metal failures in a row per MachineNetwork (by uid) and the wait they impose; cleared when the ports converge. */
  readonly metalStreaks: Map<string, MetalStreak>;
  /** When each configured machine (by namespace/name) has its device read next, in ms (drift checks). */
  readonly driftChecks: Map<string, number>;
  /** MachineNetworks (by uid) already warned about a short MachineHealthCheck nodeStartupTimeout. */
  readonly healthCheckWarned: Set<string>;
}

export const IndexNames = {
  /** Machines by `namespace/<infrastructureRef.name>` (PacketMachines only). */
  machineByInfraRef: 'machineByInfraRef',
  /** Machines by `namespace/<bootstrap.dataSecretName>`. */
  machineByDataSecret: 'machineByDataSecret',
  /** Claims by `namespace/<MachineNetwork name>` (their controller owner reference). */
  claimByMachineNetwork: 'claimByMachineNetwork',
  /** Claims a deleted MachineNetwork kept for a device that could not be checked, by `namespace/<its name>` (kept-claims.ts). */
  keptClaimByMachineNetwork: 'keptClaimByMachineNetwork',
  /** MachineHealthChecks by `namespace/<clusterName>`. */
  healthCheckByCluster: 'healthCheckByCluster',
  /** MachineNetworks by `namespace/<templateName>`. */
  machineNetworkByTemplate: 'machineNetworkByTemplate',
  /** MachineNetworks by `namespace/<cluster name>` (the cluster-name label copied from the PacketMachine). */
  machineNetworkByCluster: 'machineNetworkByCluster',
  /** PacketMachines by `namespace/<MachineNetworkTemplate>` they are linked to. */
  packetMachineByTemplate: 'packetMachineByTemplate',
  /** PacketMachines by `namespace/<cluster name>` (the cluster-name label). */
  packetMachineByCluster: 'packetMachineByCluster',
} as const;

/**
 * Label on our IPAddressClaims: the MachineNetwork that made them (its name, shortened with a
 * hash beyond 63 characters: nameLabelValue). The informer selects on it; which MachineNetwork a
 * claim belongs to is read from its owner reference, which holds the full name.
 */
export const MACHINE_NETWORK_LABEL = 'network.metal.x-k8s.io/machine-network';
