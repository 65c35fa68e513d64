import {
  CAPI_CORE_GROUP,
  CAPI_CORE_VERSIONS,
  CAPI_IPAM_GROUP,
  CAPI_IPAM_VERSIONS,
  GlobalInClusterIPPoolType,
  IPAddressBlockType,
  InClusterIPPoolType,
  clusterType,
  ipAddressClaimType,
  ipAddressType,
  type CapiCoreVersion,
  type CapiIpamVersion,
  type Cluster,
  type IPAddress,
  type IPAddressBlock,
  type IPAddressClaim,
  type IPPool,
  type PoolKind,
} from '@metal-l2/api';
import type { Manager } from '@metal-l2/kube';
import {
  AdmissionServer,
  Controller,
  Informer,
  KubeClient,
  startInProcess,
  type ClusterAccess,
  type KubeObject,
  type Logger,
  type ObjectKey,
  type ReconcileContext,
  type ResourceType,
  type RuntimeMetrics,
} from '@metal-l2/kube';
import { shapeAddress, shapeBlock, shapeClaim, type ClaimNames } from './cache-transform.js';
import { OwnWrites } from '@metal-l2/kube';
import { CountWrites } from './pool/count-writes.js';
import { readClusterIdentity } from './cluster-identity.js';
import { createIpamMetrics } from './ipam-metrics.js';
import { inReconcile, type EventSink, type IpamContext } from './context.js';
import { reconcilePool } from './pool/pool-reconciler.js';
import { PoolSizes } from './pool/pool-size.js';
import { DEFAULT_STATUS_BUDGET_BYTES } from './pool/status-budget.js';
import { DEFAULT_BLOCK_SIZE } from './block/block-layout.js';
import { poolAllocations } from './block/block-store.js';
import { createVrfRuntime, type VrfRuntimeOptions } from './vrf/index.js';
import { addIndexes, ownWriteEcho, poolWatches } from './watches.js';
import { CLAIM_WRITES_TTL_MS } from './claim/claim-writes.js';
import { poolIndexKey, refOfPool } from './pool-ref.js';
import { listPools, poolAdmissionHandler, poolWebhookPaths } from './webhook/pool-webhook.js';

export interface IpamControllerOptions {
  /** client-node's KubeConfig, or what loadKubeConfig returns. */
  readonly kubeConfig: ClusterAccess;
  /** Watch claims, IPAddresses and namespaced pools in this namespace only. */
  readonly namespace?: string | undefined;
  readonly logger: Logger;
  readonly concurrency?: number;
  /** The deadline of one pool reconcile (the runtime's DEFAULT_RECONCILE_TIMEOUT_MS when absent). */
  readonly reconcileTimeoutMs?: number;
  readonly metrics?: RuntimeMetrics;
  readonly events?: EventSink;
  readonly webhook?: { readonly port: number; readonly certDir: string; readonly host?: string } | undefined;
  readonly now?: () => Date;
  /**
   * Size budget of an object holding allocations (an IPAddressBlock; JSON, managedFields
   * included), in bytes. Default DEFAULT_STATUS_BUDGET_BYTES (1.25 MiB); the API server refuses
   * objects past about 1.5 MiB. The block size must fit it (options.ts checks the flag).
   */
  readonly statusBudgetBytes?: number | undefined;
  /** Addresses per IPAddressBlock for pools that have none yet (a power of two; default DEFAULT_BLOCK_SIZE). */
  readonly blockSize?: number | undefined;
  /** The Metal side of VRF-backed pools: API URL and client tuning, controller namespace, resync period. */
  readonly vrf?: VrfRuntimeOptions | undefined;
  /**
   * The management cluster's identity, tagged on the Metal objects pools create
   * (cluster-identity.ts). Default: the kube-system Namespace's UID, read once here.
   */
  readonly clusterIdentity?: string | undefined;
  /**
   * Test seam: the client the informers list and watch through, made from the controller's own
   * (which every read and write of a reconcile still uses). Tests hand in one whose watch of a kind
   * lags, to play a replica or a new leader with a stale cache. Default: the controller's client.
   */
  readonly cacheClient?: ((client: KubeClient) => KubeClient) | undefined;
}

/** The wired controller before it runs: what main.ts hands to the manager. */
export interface IpamRunnables {
  readonly informers: readonly { start(signal: AbortSignal): Promise<void>; hasSynced(): boolean }[];
  /** Need leadership: they write. */
  readonly controllers: readonly Controller[];
  /** Run on every replica: the webhook answers whether or not this replica leads. */
  readonly webhook?: AdmissionServer | undefined;
  readonly version: CapiIpamVersion;
}

async function discover(client: KubeClient): Promise<{ ipam: CapiIpamVersion; core: CapiCoreVersion | undefined }> {
  const ipam = await client.preferredVersion<CapiIpamVersion>(CAPI_IPAM_GROUP, CAPI_IPAM_VERSIONS);
  if (ipam === undefined) {
    throw new Error(
      `the API server serves none of ${CAPI_IPAM_VERSIONS.map((v) => `${CAPI_IPAM_GROUP}/${v}`).join(', ')}: install Cluster API (its IPAM CRDs) first`,
    );
  }
  const core = await client.preferredVersion<CapiCoreVersion>(CAPI_CORE_GROUP, CAPI_CORE_VERSIONS);
  return { ipam, core };
}

/**
 * Wires the IPAM provider: discovers which IPAM contract version the server serves, builds the
 * informers, the two pool controllers (one per pool kind, same reconciler) and the webhook.
 */
export async function createIpamController(options: IpamControllerOptions & { client: KubeClient }): Promise<IpamRunnables> {
  const { client, logger } = options;
  const versions = await discover(client);
  logger.info('discovered API versions', { ipam: versions.ipam, clusterAPI: versions.core ?? 'none' });
  const managementCluster = await readClusterIdentity(client);
  const clusterIdentity = options.clusterIdentity ?? managementCluster;
  logger.info('management cluster identity', {
    clusterIdentity,
    source: options.clusterIdentity === undefined ? 'kube-system' : 'flag',
    kubeSystemUid: managementCluster,
  });
  const ns = options.namespace;
  const cacheClient = options.cacheClient?.(client) ?? client;
  const informer = <T extends KubeObject>(type: ResourceType, namespaced: boolean, transform?: (obj: T) => T): Informer<T> =>
    new Informer<T>({
      client: cacheClient,
      type,
      logger,
      ...(namespaced && ns !== undefined ? { namespace: ns } : {}),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
      ...(transform === undefined ? {} : { transform }),
    });
  const pools: Record<PoolKind, Informer<IPPool>> = {
    InClusterIPPool: informer<IPPool>(InClusterIPPoolType, true),
    GlobalInClusterIPPool: informer<IPPool>(GlobalInClusterIPPoolType, false),
  };
  // Cached as the few fields the reconcilers read, each claim's name one string (cache-transform.ts).
  const claims = informer<IPAddressClaim>(ipAddressClaimType(versions.ipam), true, shapeClaim);
  const claimNames: ClaimNames = (key) => claims.get(key)?.metadata.name;
  const addresses = informer<IPAddress>(ipAddressType(versions.ipam), true, shapeAddress(claimNames));
  const clusters = versions.core === undefined ? undefined : informer<Cluster>(clusterType(versions.core), true);
  // Every namespace: a global pool's blocks live in the controller's, which may not be the watched one.
  const blocks = informer<IPAddressBlock>(IPAddressBlockType, false, shapeBlock(claimNames));
  addIndexes({ claims, addresses, blocks });

  const statusBudgetBytes = options.statusBudgetBytes ?? DEFAULT_STATUS_BUDGET_BYTES;
  const metrics = options.metrics === undefined ? undefined : createIpamMetrics(options.metrics.registry);
  metrics?.poolObjectBudgetBytes.set(statusBudgetBytes);
  const ctx: IpamContext = {
    client,
    version: versions.ipam,
    claimType: ipAddressClaimType(versions.ipam),
    addressType: ipAddressType(versions.ipam),
    caches: { pools, claims, addresses, clusters, blocks },
    events: options.events ?? { event: (obj, e) => logger.info('event', { object: obj.metadata.name, ...e }) },
    logger,
    now: options.now ?? (() => new Date()),
    watchNamespace: ns,
    writeConcurrency: 16,
    ownWrites: {
      pools: new OwnWrites<IPPool>(),
      blocks: new OwnWrites<IPAddressBlock>(),
      claims: new OwnWrites<IPAddressClaim>({ ttlMs: CLAIM_WRITES_TTL_MS }),
      addresses: new OwnWrites<IPAddress>({ ttlMs: CLAIM_WRITES_TTL_MS }),
    },
    countWrites: new CountWrites(),
    metrics,
    vrf: createVrfRuntime({ ...options.vrf, clusterIdentity }, logger),
    statusBudget: new PoolSizes(statusBudgetBytes),
    blocks: {
      size: options.blockSize ?? DEFAULT_BLOCK_SIZE,
      globalNamespace: options.vrf?.controllerNamespace ?? ns ?? 'default',
    },
    managementCluster,
    leftAddresses: new Set<string>(),
  };

  const echo = ownWriteEcho(ctx.ownWrites);
  const controllers = (Object.keys(pools) as PoolKind[]).map((kind) => {
    const controller = new Controller({
      name: kind.toLowerCase(),
      concurrency: options.concurrency ?? 4,
      ...(options.reconcileTimeoutMs === undefined ? {} : { reconcileTimeoutMs: options.reconcileTimeoutMs }),
      logger,
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
      reconciler: {
        reconcile: (key: ObjectKey, rc: ReconcileContext) =>
          reconcilePool(inReconcile(ctx, rc), { kind, namespace: key.namespace, name: key.name }),
      },
    });
    const watches = poolWatches(kind, claims);
    // A pool version our own guarded status write produced holds nothing the pass that wrote it
    // did not know: no pass for it.
    controller.watch(pools[kind], undefined, {
      predicate: (event) =>
        event.type !== 'update' || !echo.poolStatus(poolIndexKey(refOfPool(kind, event.object)), event.oldObject, event.object),
    });
    controller.watch(claims, watches.claims, { predicate: (event) => !echo.claims(event) });
    controller.watch(addresses, watches.addresses, { predicate: (event) => !echo.addresses(event) });
    if (clusters !== undefined) controller.watch(clusters, watches.clusters);
    // Our own block writes need no pass (the pass that wrote them knew); a block deleted by
    // someone else does: its allocations are rebuilt from the IPAddresses.
    controller.watch(blocks, watches.blocks, { predicate: (event) => event.type === 'delete', resync: false });
    return controller;
  });

  const webhook =
    options.webhook === undefined || options.webhook.port < 0
      ? undefined
      : new AdmissionServer({
          port: options.webhook.port,
          ...(options.webhook.host === undefined ? {} : { host: options.webhook.host }),
          certDir: options.webhook.certDir,
          logger: logger.child({ component: 'webhook' }),
          handlers: Object.fromEntries(
            (Object.keys(poolWebhookPaths) as PoolKind[]).map((kind) => [
              poolWebhookPaths[kind],
              poolAdmissionHandler(kind, { listAll: listPools(pools), allocationsOf: (pool) => poolAllocations(ctx, pool) }),
            ]),
          ),
        });
  return {
    informers: [
      pools.InClusterIPPool,
      pools.GlobalInClusterIPPool,
      claims,
      addresses,
      blocks,
      ...(clusters === undefined ? [] : [clusters]),
    ],
    controllers,
    webhook,
    version: versions.ipam,
  };
}

/** Adds the wired controller to a manager: caches and webhook on every replica, controllers on the leader. */
export function addToManager(manager: Manager, runnables: IpamRunnables): void {
  for (const controller of runnables.controllers) manager.addController(controller);
  if (runnables.webhook !== undefined) manager.add(runnables.webhook, { name: 'webhook', needsLeaderElection: false });
}

export interface RunningIpamController {
  /** The webhook's bound port (when started on port 0). */
  readonly webhookPort: number;
  stop(): Promise<void>;
}

/**
 * Starts the controller in this process without leader election or signal handling: for tests
 * and embedding. main.ts runs the same runnables under a manager with leader election.
 */
export async function startIpamController(options: IpamControllerOptions & { leaderElection: false }): Promise<RunningIpamController> {
  const client = KubeClient.fromKubeConfig(options.kubeConfig, { fieldManager: 'metal-l2-ipam-controller' });
  const runnables = await createIpamController({ ...options, client });
  const running = await startInProcess({
    logger: options.logger,
    client,
    add: (manager) => addToManager(manager, runnables),
    ready: () => runnables.informers.every((i) => i.hasSynced()) && (runnables.webhook === undefined || runnables.webhook.port() !== 0),
  });
  return { webhookPort: runnables.webhook?.port() ?? 0, stop: () => running.stop() };
}
