#!/usr/bin/env node
// metal-l2-network-controller: reads flags, builds the root logger and clients, and runs the manager.
import {
  EventRecorder,
  KubeClient,
  LeadershipLostError,
  Manager,
  createLogger,
  createRuntimeMetrics,
  errorFields,
  leaderIdentity,
  loadKubeConfig,
  podNamespace,
} from '@metal-l2/kube';
import { createPrometheusObserver } from '@metal-l2/metal-api';
import { parseFlags, usage, type NetworkFlags } from './options.js';
import { addToManager, createNetworkController } from './start.js';

async function main(): Promise<number> {
  let flags: NetworkFlags | 'help';
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (err: unknown) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${usage}`);
    return 2;
  }
  if (flags === 'help') {
    process.stdout.write(usage);
    return 0;
  }
  const logger = createLogger({ level: flags.logLevel, format: flags.logFormat, fields: { component: 'metal-l2-network-controller' } });
  const kubeConfig = loadKubeConfig({ kubeconfig: flags.kubeconfig });
  const client = KubeClient.fromKubeConfig(kubeConfig, { fieldManager: 'metal-l2-network-controller' });
  const metrics = createRuntimeMetrics();
  const identity = leaderIdentity();
  const events = new EventRecorder({ client, component: 'metal-l2-network-controller', instance: identity, logger });
  const electionNamespace = flags.leaderElectionNamespace ?? podNamespace();
  if (flags.leaderElect && electionNamespace === undefined) {
    logger.error('leader election needs a namespace: pass --leader-election-namespace or run in a pod', {});
    return 2;
  }
  const manager = new Manager({
    logger,
    metrics,
    metricsBindAddress: flags.metricsBindAddress,
    healthProbeBindAddress: flags.healthProbeBindAddress,
    ...(flags.leaderElect && electionNamespace !== undefined
      ? { leaderElection: { client, namespace: electionNamespace, name: flags.leaderElectionId, identity } }
      : {}),
  });
  try {
    const runnables = await createNetworkController({
      client,
      kubeConfig,
      namespace: flags.namespace,
      logger,
      metrics,
      events,
      concurrency: flags.concurrency,
      webhook: flags.webhookPort === 0 ? undefined : { port: flags.webhookPort, certDir: flags.webhookCertDir },
      // One observer for every client (one per token): the metrics are registered once.
      metal: { baseUrl: flags.metalApiUrl, observer: createPrometheusObserver(metrics.registry) },
      defaultCredentials: flags.metalCredentialsSecret,
      metadataUrl: flags.metadataUrl,
      timings: { holdTimeoutMs: flags.holdTimeoutSeconds * 1000, provisioningEstimateMs: flags.provisioningEstimateSeconds * 1000 },
    });
    addToManager(manager, runnables);
    await manager.start();
    return 0;
  } catch (err: unknown) {
    logger.error(err instanceof LeadershipLostError ? 'lost leadership, exiting' : 'controller failed', { err: errorFields(err) });
    return 1;
  } finally {
    client.close();
  }
}

process.exitCode = await main();
