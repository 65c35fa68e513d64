// startCappFixture: the two controllers, their shared informers and the Metal client, started
// and stopped together. Tests and the demo call it; nothing runs at import time.
import { CAPI_CORE_GROUP, CAPI_CORE_VERSIONS, type CapiCoreVersion } from '@metal-l2/api';
import { Controller, KubeClient, silentLogger, type ClusterAccess, type Logger } from '@metal-l2/kube';
import { createMetalClient, type MetalClientOptions } from '@metal-l2/metal-api';
import { CAPI_MACHINE_WORKERS, CAPP_DEVICE_POLL_MS, CAPP_MACHINE_WORKERS } from './capp-api.js';
import { renderGoTemplate, type GoTemplateOptions } from './go-template.js';
import { createFixtureInformers } from './informers.js';
import { MachineReconciler } from './machine-reconciler.js';
import { PacketMachineReconciler } from './packet-machine-reconciler.js';
import { VIP_RETRY_MS } from './vip-manager.js';
import { watchForCapp, watchForMachineController } from './watches.js';

export interface CappFixtureOptions {
  /** client-node's KubeConfig, or what loadKubeConfig returns. */
  readonly kubeConfig: ClusterAccess;
  /** The Metal API (the simulator's baseUrl, …/metal/v1) and the token CAPP would read from PACKET_API_KEY. */
  readonly metal: { readonly baseUrl: string; readonly token: string } & Pick<MetalClientOptions, 'retry' | 'rateLimit' | 'timeoutMs'>;
  /** Watch one namespace; all when absent. */
  readonly namespace?: string;
  readonly logger?: Logger;
  /** The Cluster API version to read Machines and Clusters in; discovered (v1beta2 first) when absent. */
  readonly capiVersion?: CapiCoreVersion;
  /** Also play the CAPI v1.7 Machine controller's owner-reference and providerID part. Default true. */
  readonly playMachineController?: boolean;
  /** How often a queued or provisioning device is looked at again; CAPP's 10 s by default. */
  readonly pollIntervalMs?: number;
  /** How long CAPP waits after a failed elastic-IP assignment (CPEM) or BGP enablement (kube-vip); 20 s by default. */
  readonly vipRetryIntervalMs?: number;
  /** Where the go-template binary comes from and is cached (tests only). */
  readonly goTemplate?: GoTemplateOptions;
}

export interface RunningCappFixture {
  /** The version Machines and Clusters are read in. */
  readonly capiVersion: CapiCoreVersion;
  /** Stops the controllers and informers; resolves once every in-flight reconcile has returned. */
  stop(): Promise<void>;
}

async function discoverCapiVersion(client: KubeClient): Promise<CapiCoreVersion> {
  const version = await client.preferredVersion(CAPI_CORE_GROUP, CAPI_CORE_VERSIONS);
  if (version === undefined)
    throw new Error(
      `the API server serves none of ${CAPI_CORE_VERSIONS.join(', ')} of ${CAPI_CORE_GROUP}: install the Cluster API CRDs first`,
    );
  return version;
}

/**
 * Starts the fixture: informers on PacketMachines, Machines, Clusters and PacketClusters, the
 * CAPP PacketMachine controller and (unless turned off) the Machine controller part. Resolves
 * once the caches are synced and the workers run.
 */
export async function startCappFixture(options: CappFixtureOptions): Promise<RunningCappFixture> {
  const logger = (options.logger ?? silentLogger()).child({ component: 'capp-fixture' });
  const client = KubeClient.fromKubeConfig(options.kubeConfig, { fieldManager: 'capp-fixture' });
  const capiVersion = options.capiVersion ?? (await discoverCapiVersion(client));
  const { baseUrl, token, ...metalOptions } = options.metal;
  const metal = createMetalClient({
    ...metalOptions,
    baseUrl,
    token,
    logger: logger.child({ component: 'metal-api' }),
    userAgent: 'cluster-api-provider-packet/v0.9.0 (metal-l2 capp-fixture)',
  });
  const informers = createFixtureInformers({ client, capiVersion, namespace: options.namespace, logger });
  const goTemplate = options.goTemplate ?? {};

  const controllers: Controller[] = [];
  const capp = new Controller({
    name: 'packetmachine',
    logger,
    concurrency: CAPP_MACHINE_WORKERS,
    reconciler: new PacketMachineReconciler({
      client,
      metal,
      token,
      capiVersion,
      informers,
      pollIntervalMs: options.pollIntervalMs ?? CAPP_DEVICE_POLL_MS,
      vipRetryIntervalMs: options.vipRetryIntervalMs ?? VIP_RETRY_MS,
      renderTemplate: (text, data) => renderGoTemplate(text, data, goTemplate),
      now: () => new Date(),
    }),
  });
  watchForCapp(capp, { informers, capiVersion });
  controllers.push(capp);
  if (options.playMachineController ?? true) {
    const machines = new Controller({
      name: 'machine',
      logger,
      concurrency: CAPI_MACHINE_WORKERS,
      reconciler: new MachineReconciler({ client, capiVersion, informers }),
    });
    watchForMachineController(machines, { informers });
    controllers.push(machines);
  }

  const abort = new AbortController();
  const all = [informers.packetMachines, informers.machines, informers.clusters, informers.packetClusters];
  await Promise.all(all.map((i) => i.start(abort.signal)));
  const running = controllers.map((c) =>
    c.start(abort.signal).catch((err: unknown) => {
      logger.error('controller stopped on an unexpected error', {
        controller: c.name,
        err: err instanceof Error ? err.message : String(err),
      });
    }),
  );
  logger.info('capp fixture started', {
    capiVersion,
    namespace: options.namespace ?? '(all)',
    playMachineController: controllers.length > 1,
  });

  return {
    capiVersion,
    async stop(): Promise<void> {
      abort.abort();
      await Promise.all(running);
      await Promise.all(all.map((i) => i.stopped()));
    },
  };
}
