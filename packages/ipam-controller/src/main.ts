#!/usr/bin/env node
// metal-l2-ipam-controller: reads flags, builds the root logger and clients, and runs the manager.
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
import { parseFlags, usage, type IpamFlags } from './options.js';
import { addToManager, createIpamController } from './start.js';

async function main(): Promise<number> {
  let flags: IpamFlags | 'help';
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
  const logger = createLogger({ level: flags.logLevel, format: flags.logFormat, fields: { component: 'metal-l2-ipam-controller' } });
  const kubeConfig = loadKubeConfig({ kubeconfig: flags.kubeconfig });
  const client = KubeClient.fromKubeConfig(kubeConfig, { fieldManager: 'metal-l2-ipam-controller' });
  const metrics = createRuntimeMetrics();
  const identity = leaderIdentity();
  const events = new EventRecorder({ client, component: 'metal-l2-ipam-controller', instance: identity, logger });
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
    const runnables = await createIpamController({
      client,
      kubeConfig,
      namespace: flags.namespace,
      logger,
      metrics,
      events,
      concurrency: flags.concurrency,
      webhook: flags.webhookPort === 0 ? undefined : { port: flags.webhookPort, certDir: flags.webhookCertDir },
      vrf: {
        // One observer for every client (one per token): the metrics are registered once.
        metal: { baseUrl: flags.metalApiUrl, observer: createPrometheusObserver(metrics.registry) },
        controllerNamespace: flags.controllerNamespace ?? podNamespace(),
        resyncMs: flags.vrfResyncSeconds * 1000,
      },
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
