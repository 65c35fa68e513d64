#!/usr/bin/env node
// metal-l2-ipam-controller: the shared controller main (packages/kube) with this controller's wiring.
import { podNamespace, runControllerMain } from '@metal-l2/kube';
import { createPrometheusObserver } from '@metal-l2/metal-api';
import { parseFlags, usage } from './options.js';
import { addToManager, createIpamController } from './start.js';

process.exitCode = await runControllerMain({
  component: 'metal-l2-ipam-controller',
  argv: process.argv.slice(2),
  usage,
  parseFlags,
  wire: async (manager, { flags, client, kubeConfig, logger, metrics, events }) => {
    const runnables = await createIpamController({
      client,
      kubeConfig,
      namespace: flags.namespace,
      logger,
      metrics,
      events,
      concurrency: flags.concurrency,
      ...(flags.reconcileTimeoutSeconds === undefined ? {} : { reconcileTimeoutMs: flags.reconcileTimeoutSeconds * 1000 }),
      clusterIdentity: flags.clusterIdentity,
      statusBudgetBytes: flags.poolStatusBudgetBytes,
      blockSize: flags.blockSize,
      webhook: flags.webhookPort === 0 ? undefined : { port: flags.webhookPort, certDir: flags.webhookCertDir },
      vrf: {
        // One observer for every client (one per token): the metrics are registered once.
        metal: { baseUrl: flags.metalApiUrl, rateLimit: flags.metalRateLimit, observer: createPrometheusObserver(metrics.registry) },
        controllerNamespace: flags.controllerNamespace ?? podNamespace(),
        resyncMs: flags.vrfResyncSeconds * 1000,
      },
    });
    addToManager(manager, runnables);
  },
});
