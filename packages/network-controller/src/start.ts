import {
  CAPI_CORE_GROUP,
  CAPI_CORE_VERSIONS,
  CAPI_IPAM_GROUP,
  CAPI_IPAM_VERSIONS,
  CAPP_GROUP,
  CAPP_VERSION,
  CLUSTER_ENDPOINT_LABEL,
  ClusterEndpointTemplateType,
  ClusterEndpointType,
  MachineNetworkTemplateType,
  MachineNetworkType,
  PacketClusterType,
  PacketMachineTemplateType,
  PacketMachineType,
  clusterType,
  ipAddressClaimType,
  ipAddressType,
  machineHealthCheckType,
  machineType,
  type CapiCoreVersion,
  type CapiIpamVersion,
  type Cluster,
  type ClusterEndpoint,
  type ClusterEndpointTemplate,
  type IPAddress,
  type IPAddressClaim,
  type Machine,
  type MachineHealthCheck,
  type MachineNetwork,
  type MachineNetworkTemplate,
  type PacketCluster,
  type PacketMachine,
  type PacketMachineTemplate,
} from '@metal-l2/api';
import type { Manager } from '@metal-l2/kube';
import {
  AdmissionServer,
  BucketRateLimiter,
  Controller,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  Informer,
  KubeClient,
  OwnWrites,
  startInProcess,
  type InformerHandle,
  type ClusterAccess,
  type KubeObject,
  type Logger,
  type ObjectKey,
  type ReconcileContext,
  type ReconcileResult,
  type ResourceType,
  type RuntimeMetrics,
} from '@metal-l2/kube';
import { MetalClients, type MetalClientOptions } from '@metal-l2/metal-api';
import type { EndpointContext } from './cluster-endpoint/context.js';
import { reconcileClusterEndpoint } from './cluster-endpoint/reconciler.js';
import { addEndpointIndexes, announcerChanged, endpointWatches } from './cluster-endpoint/watches.js';
import { MACHINE_NETWORK_LABEL, type DefaultCredentials, type EventSink, type NetworkContext, type NetworkTimings } from './context.js';
import { reconcileKeptClaims } from './machine-network/kept-claims.js';
import { reconcileMachineNetwork } from './machine-network/reconciler.js';
import { VlanCache } from './metal/machine-metal.js';
import { DEFAULT_METADATA_URL } from './options.js';
import { addIndexes, machineNetworkWatches, type NetworkInformers } from './watches.js';
import { clusterAdmissionHandler } from './webhook/cluster-webhook.js';
import { packetMachineAdmissionHandler } from './webhook/packet-machine-webhook.js';
import { NetworkWebhookPaths } from './webhook/paths.js';
import { templateAdmissionHandler } from './webhook/template-webhook.js';

export const DEFAULT_TIMINGS: NetworkTimings = {
  holdTimeoutMs: 300_000,
  provisioningEstimateMs: 600_000,
  batchPollMs: 1_500,
  devicePollMs: 5_000,
  metalRetryMs: 5_000,
  metalRetryMaxMs: 300_000,
  wakeIntervalMs: 15_000,
  driftCheckMs: 600_000,
  bootScriptTimeoutMs: 900_000,
};

/**
 * One machine's reconcile: a device read, a VLAN batch, a poll, a few API writes. A minute is
 * ample; a call hung longer is aborted and the machine retried, instead of holding a worker.
 */
export const NETWORK_RECONCILE_TIMEOUT_MS = 60_000;

export interface NetworkControllerOptions {
  /** client-node's KubeConfig, or what loadKubeConfig returns. */
  readonly kubeConfig: ClusterAccess;
  readonly namespace?: string | undefined;
  readonly logger: Logger;
  readonly concurrency?: number;
  /** The deadline of one reconcile (NETWORK_RECONCILE_TIMEOUT_MS when absent). */
  readonly reconcileTimeoutMs?: number;
  readonly metrics?: RuntimeMetrics;
  readonly events?: EventSink;
  readonly webhook?: { readonly port: number; readonly certDir: string; readonly host?: string } | undefined;
  readonly now?: () => Date;
  /** Metal API URL and client tuning (the token comes from the machine's Secret). */
  readonly metal?: Omit<MetalClientOptions, 'token' | 'logger'>;
  readonly defaultCredentials?: DefaultCredentials | undefined;
  readonly metadataUrl?: string;
  /** --announcer-image: what Ignition control planes run keepalived from. */
  readonly announcerImage?: string | undefined;
  readonly timings?: Partial<NetworkTimings>;
}

export interface NetworkRunnables {
  readonly informers: readonly InformerHandle[];
  readonly controllers: readonly Controller[];
  readonly webhook?: AdmissionServer | undefined;
}

/** The Cluster API versions the API server serves, and whether it serves MachineHealthChecks. */
interface Discovered {
  readonly ipam: CapiIpamVersion;
  readonly core: CapiCoreVersion | undefined;
  readonly healthChecks: boolean;
}

async function discover(client: KubeClient): Promise<Discovered> {
  const ipam = await client.preferredVersion<CapiIpamVersion>(CAPI_IPAM_GROUP, CAPI_IPAM_VERSIONS);
  if (ipam === undefined) {
    throw new Error(
      `the API server serves none of ${CAPI_IPAM_VERSIONS.map((v) => `${CAPI_IPAM_GROUP}/${v}`).join(', ')}: install Cluster API (its IPAM CRDs) first`,
    );
  }
  const capp = await client.servedVersions(CAPP_GROUP);
  if (!capp.includes(CAPP_VERSION) || !(await client.servedResources(CAPP_GROUP, CAPP_VERSION)).includes(PacketMachineType.plural)) {
    throw new Error(
      `the API server does not serve ${PacketMachineType.plural}.${CAPP_GROUP}/${CAPP_VERSION}: install Cluster API Provider Packet (its CRDs) first`,
    );
  }
  const core = await client.preferredVersion<CapiCoreVersion>(CAPI_CORE_GROUP, CAPI_CORE_VERSIONS);
  const healthChecks = core !== undefined && (await client.servedResources(CAPI_CORE_GROUP, core)).includes('machinehealthchecks');
  return { ipam, core, healthChecks };
}

type StartOptions = NetworkControllerOptions & { readonly client: KubeClient };

/** The ClusterEndpoint controller's own informers (absent when the server serves no CAPI core kinds). */
interface EndpointInformers {
  readonly clusters: Informer<Cluster>;
  readonly endpoints: Informer<ClusterEndpoint>;
  readonly templates: Informer<ClusterEndpointTemplate>;
  readonly claims: Informer<IPAddressClaim>;
}

type Informers = NetworkInformers & { packetClusters: Informer<PacketCluster>; endpoint: EndpointInformers | undefined };

/**
 * Wires the network controller: discovers the served Cluster API versions, builds the informers,
 * the MachineNetwork controller (keyed by PacketMachine) and the webhooks.
 */
export async function createNetworkController(options: StartOptions): Promise<NetworkRunnables> {
  const versions = await discover(options.client);
  options.logger.info('discovered API versions', { ipam: versions.ipam, clusterAPI: versions.core ?? 'none' });
  const informers = buildInformers(options, versions);
  addIndexes(informers);
  const ctx = buildContext(options, versions, informers);
  const controller = buildController(options, ctx, informers);
  const endpointController = buildEndpointController(options, ctx, informers);
  const webhook = buildWebhook(options, ctx.now);
  return {
    informers: allInformers(informers),
    controllers: [
      controller,
      buildKeptClaimsController(options, ctx, informers),
      ...(endpointController === undefined ? [] : [endpointController]),
    ],
    webhook,
  };
}

/** One informer per type the controller reads, in the watched namespace when there is one. */
function buildInformers(options: StartOptions, versions: Discovered): Informers {
  const { client, logger } = options;
  const ns = options.namespace;
  const informer = <T extends KubeObject>(type: ResourceType, extra: { labelSelector?: string } = {}): Informer<T> =>
    new Informer<T>({
      client,
      type,
      logger,
      ...extra,
      ...(ns !== undefined ? { namespace: ns } : {}),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
  const core = versions.core;
  const clusters = core === undefined ? undefined : informer<Cluster>(clusterType(core));
  return {
    packetMachines: informer<PacketMachine>(PacketMachineType),
    packetMachineTemplates: informer<PacketMachineTemplate>(PacketMachineTemplateType),
    packetClusters: informer<PacketCluster>(PacketClusterType),
    machineNetworks: informer<MachineNetwork>(MachineNetworkType),
    templates: informer<MachineNetworkTemplate>(MachineNetworkTemplateType),
    // Only our claims: a cluster with thousands of other claims costs this controller nothing.
    claims: informer<IPAddressClaim>(ipAddressClaimType(versions.ipam), { labelSelector: MACHINE_NETWORK_LABEL }),
    addresses: informer<IPAddress>(ipAddressType(versions.ipam)),
    machines: core === undefined ? undefined : informer<Machine>(machineType(core)),
    clusters,
    healthChecks: core === undefined || !versions.healthChecks ? undefined : informer<MachineHealthCheck>(machineHealthCheckType(core)),
    endpoint:
      clusters === undefined
        ? undefined
        : {
            clusters,
            endpoints: informer<ClusterEndpoint>(ClusterEndpointType),
            templates: informer<ClusterEndpointTemplate>(ClusterEndpointTemplateType),
            // Only the endpoint claims: the MachineNetwork claims have their own informer.
            claims: informer<IPAddressClaim>(ipAddressClaimType(versions.ipam), { labelSelector: CLUSTER_ENDPOINT_LABEL }),
          },
  };
}

function buildContext(options: StartOptions, versions: Discovered, informers: Informers): NetworkContext {
  const { client, logger } = options;
  const core = versions.core;
  const now = options.now ?? (() => new Date());
  const metalLogger = logger.child({ component: 'metal-api' });
  return {
    client,
    versions: { ipam: versions.ipam, core: versions.core },
    types: {
      claim: ipAddressClaimType(versions.ipam),
      address: ipAddressType(versions.ipam),
      machine: core === undefined ? undefined : machineType(core),
    },
    caches: { ...informers, clusterEndpoints: informers.endpoint?.endpoints },
    events: options.events ?? { event: (obj, e) => logger.info('event', { object: obj.metadata.name, kind: obj.kind, ...e }) },
    logger,
    now,
    metal: new MetalClients({ settings: { userAgent: 'metal-l2-network-controller', ...options.metal }, logger: metalLogger }),
    vlans: new VlanCache({ now: () => now().getTime() }),
    defaultCredentials: options.defaultCredentials,
    metadataUrl: options.metadataUrl ?? DEFAULT_METADATA_URL,
    announcerImage: options.announcerImage,
    timings: { ...DEFAULT_TIMINGS, ...options.timings },
    ownWrites: new OwnWrites<MachineNetwork>(),
    healthCheckWarned: new Set(),
    batchChecks: new Map(),
    metalStreaks: new Map(),
    driftChecks: new Map(),
  };
}

/** The MachineNetwork controller, keyed by PacketMachine, and what it watches. */
function buildController(options: StartOptions, ctx: NetworkContext, informers: Informers): Controller {
  const controller = new Controller({
    name: 'machinenetwork',
    concurrency: options.concurrency ?? 10,
    reconcileTimeoutMs: options.reconcileTimeoutMs ?? NETWORK_RECONCILE_TIMEOUT_MS,
    // A Metal outage fails every machine's step for a while: after it ends, machines should move
    // within a minute, not after the runtime's default 5-minute backoff cap.
    rateLimiter: new MaxOfRateLimiter([
      new ItemExponentialRateLimiter({ baseDelayMs: 5, maxDelayMs: 60_000 }),
      new BucketRateLimiter({ qps: 10, burst: 100 }),
    ]),
    logger: options.logger,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    reconciler: {
      // The client bound to the reconcile too: a call that forgets its signal is still cancelled
      // on shutdown or lost leadership.
      reconcile: (key: ObjectKey, rctx) =>
        reconcileMachineNetwork(
          { ...ctx, client: ctx.client.withSignal(rctx.signal) },
          { namespace: key.namespace ?? '', name: key.name },
          rctx,
        ),
    },
  });
  const watches = machineNetworkWatches(informers);
  controller.watch(informers.packetMachines);
  controller.watch(informers.machineNetworks);
  controller.watch(informers.claims, watches.claims);
  controller.watch(informers.addresses, watches.addresses);
  controller.watch(informers.templates, watches.templates);
  if (informers.machines !== undefined) controller.watch(informers.machines, watches.machines);
  if (informers.clusters !== undefined) controller.watch(informers.clusters, watches.clusters);
  // A Cluster's endpoint getting its address wakes its machines (the control planes wait for it).
  if (informers.endpoint !== undefined) controller.watch(informers.endpoint.endpoints, watches.clusterEndpoints);
  return controller;
}

/**
 * The kept-address controller, keyed by deleted MachineNetwork (a key space of its own: a new
 * machine of the same name has its own MachineNetwork): it releases the claims kept for a device
 * that could not be checked once Metal says the device is gone.
 */
function buildKeptClaimsController(options: StartOptions, ctx: NetworkContext, informers: Informers): Controller {
  const controller = smallController(options, { name: 'keptaddress', ctx, reconcile: reconcileKeptClaims });
  controller.watch(informers.claims, machineNetworkWatches(informers).keptClaims);
  return controller;
}

/**
 * A controller of two workers for a side job: each reconcile gets the context with its client
 * bound to the reconcile's signal (cancelled on shutdown or lost leadership) and a namespace/name key.
 */
function smallController<C extends { readonly client: KubeClient }>(
  options: StartOptions,
  job: {
    readonly name: string;
    readonly ctx: C;
    readonly reconcile: (ctx: C, key: { namespace: string; name: string }, rctx: ReconcileContext) => Promise<ReconcileResult>;
  },
): Controller {
  return new Controller({
    name: job.name,
    concurrency: 2,
    reconcileTimeoutMs: options.reconcileTimeoutMs ?? NETWORK_RECONCILE_TIMEOUT_MS,
    logger: options.logger,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    reconciler: {
      reconcile: (key: ObjectKey, rctx) =>
        job.reconcile(
          { ...job.ctx, client: job.ctx.client.withSignal(rctx.signal) },
          { namespace: key.namespace ?? '', name: key.name },
          rctx,
        ),
    },
  });
}

/** The ClusterEndpoint controller, keyed by Cluster, when the server serves Cluster API's core kinds. */
function buildEndpointController(options: StartOptions, ctx: NetworkContext, informers: Informers): Controller | undefined {
  const own = informers.endpoint;
  const core = ctx.versions.core;
  if (own === undefined || core === undefined) return undefined;
  addEndpointIndexes(own.clusters);
  const ectx: EndpointContext = {
    client: ctx.client,
    ipamVersion: ctx.versions.ipam,
    types: { claim: ctx.types.claim, cluster: clusterType(core) },
    caches: {
      clusters: own.clusters,
      endpoints: own.endpoints,
      templates: own.templates,
      claims: own.claims,
      addresses: informers.addresses,
      machineNetworks: informers.machineNetworks,
      machines: informers.machines,
      packetMachines: informers.packetMachines,
    },
    events: ctx.events,
    now: ctx.now,
  };
  const controller = smallController(options, { name: 'clusterendpoint', ctx: ectx, reconcile: reconcileClusterEndpoint });
  const watches = endpointWatches(own);
  controller.watch(own.clusters);
  controller.watch(own.endpoints);
  controller.watch(own.claims, watches.claims);
  controller.watch(informers.addresses, watches.addresses);
  controller.watch(own.templates, watches.templates);
  // A machine given the announcer, or gone, changes whether the Cluster's address may be given back.
  controller.watch(informers.machineNetworks, watches.machineNetworks, { predicate: announcerChanged });
  return controller;
}

/** The admission server (PacketMachine hold, template validation), unless disabled (no options or a negative port). */
function buildWebhook(options: StartOptions, now: () => Date): AdmissionServer | undefined {
  const { client, logger, webhook } = options;
  const ns = options.namespace;
  if (webhook === undefined || webhook.port < 0) return undefined;
  return new AdmissionServer({
    port: webhook.port,
    ...(webhook.host === undefined ? {} : { host: webhook.host }),
    certDir: webhook.certDir,
    logger: logger.child({ component: 'webhook' }),
    handlers: {
      [NetworkWebhookPaths.packetMachine]: packetMachineAdmissionHandler({
        client,
        ...(ns === undefined ? {} : { namespace: ns }),
        logger: logger.child({ component: 'webhook' }),
        now,
      }),
      [NetworkWebhookPaths.cluster]: clusterAdmissionHandler({
        ...(ns === undefined ? {} : { namespace: ns }),
        logger: logger.child({ component: 'webhook' }),
        now,
      }),
      [NetworkWebhookPaths.machineNetworkTemplate]: templateAdmissionHandler(),
    },
  });
}

function allInformers(informers: Informers): InformerHandle[] {
  return [
    informers.packetMachines,
    informers.packetMachineTemplates,
    informers.packetClusters,
    informers.machineNetworks,
    informers.templates,
    informers.claims,
    informers.addresses,
    ...(informers.machines === undefined ? [] : [informers.machines]),
    ...(informers.clusters === undefined ? [] : [informers.clusters]),
    ...(informers.healthChecks === undefined ? [] : [informers.healthChecks]),
    ...(informers.endpoint === undefined ? [] : [informers.endpoint.endpoints, informers.endpoint.templates, informers.endpoint.claims]),
  ];
}

/**
 * Adds the wired controller to a manager: caches and webhook on every replica, the controller on
 * the leader. Readiness is the webhook's alone: it reads PacketMachineTemplates live and
 * templates need no cache, so no informer (the optional MachineHealthCheck one included) gates
 * it; with failurePolicy Fail an unready pod would refuse every linked PacketMachine CREATE.
 */
export function addToManager(manager: Manager, runnables: NetworkRunnables): void {
  for (const informer of runnables.informers) manager.addInformer(informer, { gatesReadiness: false });
  for (const controller of runnables.controllers) manager.addController(controller);
  const webhook = runnables.webhook;
  if (webhook !== undefined) {
    manager.add(webhook, { name: 'webhook', needsLeaderElection: false });
    manager.addReadinessCheck('webhook-serving', () => webhook.port() !== 0);
  }
}

export interface RunningNetworkController {
  readonly webhookPort: number;
  stop(): Promise<void>;
}

/**
 * Starts the controller in this process without leader election or signal handling: for tests
 * and embedding. main.ts runs the same runnables under a manager with leader election.
 */
export async function startNetworkController(options: NetworkControllerOptions): Promise<RunningNetworkController> {
  const client = KubeClient.fromKubeConfig(options.kubeConfig, { fieldManager: 'metal-l2-network-controller' });
  const runnables = await createNetworkController({ ...options, client });
  const running = await startInProcess({
    logger: options.logger,
    client,
    add: (manager) => addToManager(manager, runnables),
    ready: () => runnables.informers.every((i) => i.hasSynced()) && (runnables.webhook === undefined || runnables.webhook.port() !== 0),
  });
  return { webhookPort: runnables.webhook?.port() ?? 0, stop: () => running.stop() };
}
