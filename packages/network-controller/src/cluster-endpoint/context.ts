import type {
  CapiIpamVersion,
  Cluster,
  ClusterEndpoint,
  ClusterEndpointTemplate,
  IPAddress,
  IPAddressClaim,
  Machine,
  MachineNetwork,
  PacketMachine,
  ResourceType,
} from '@metal-l2/api';
import type { KubeClient, Logger, ReconcileContext, Step } from '@metal-l2/kube';
import type { EventSink, ObjectCache } from '../context.js';

export interface EndpointCaches {
  readonly clusters: ObjectCache<Cluster>;
  readonly endpoints: ObjectCache<ClusterEndpoint>;
  readonly templates: ObjectCache<ClusterEndpointTemplate>;
  /** Only the endpoint claims (label selector CLUSTER_ENDPOINT_LABEL). */
  readonly claims: ObjectCache<IPAddressClaim>;
  readonly addresses: ObjectCache<IPAddress>;
  /** With the index machineNetworkByCluster: which machines of a Cluster announce its VIP. */
  readonly machineNetworks: ObjectCache<MachineNetwork>;
  /** With the index machineByInfraRef: which of them are control planes. */
  readonly machines?: ObjectCache<Machine> | undefined;
  readonly packetMachines: ObjectCache<PacketMachine>;
}

/** Everything the ClusterEndpoint reconciler needs from outside, handed in by start.ts (or a test). */
export interface EndpointContext {
  readonly client: KubeClient;
  readonly ipamVersion: CapiIpamVersion;
  readonly types: { readonly claim: ResourceType; readonly cluster: ResourceType };
  readonly caches: EndpointCaches;
  readonly events: EventSink;
  readonly now: () => Date;
}

/** What one reconcile of a Cluster read; `endpoint` is a working copy whose status the steps edit and the runner patches once. */
export interface EndpointScope {
  readonly ctx: EndpointContext;
  readonly rctx: ReconcileContext;
  readonly namespace: string;
  readonly name: string;
  readonly cluster: Cluster;
  readonly endpoint: ClusterEndpoint;
  readonly now: Date;
  readonly logger: Logger;
  /** Set by a step whose wait is not worth telling the user yet (a claim just made, not answered). */
  quiet?: boolean;
}

export type EndpointStep = Step<EndpointScope>;
