#!/usr/bin/env node
// metal-l2-network-controller: the shared controller main (packages/kube) with this controller's wiring.
import { runControllerMain } from '@metal-l2/kube';
import { createPrometheusObserver } from '@metal-l2/metal-api';
import { parseFlags, usage } from './options.js';
import { addToManager, createNetworkController } from './start.js';

process.exitCode = await runControllerMain({
  component: 'metal-l2-network-controller',
  argv: process.argv.slice(2),
  usage,
  parseFlags,
  wire: async (manager, { flags, client, kubeConfig, logger, metrics, events }) => {
    const runnables = await createNetworkController({
      client,
      kubeConfig,
      namespace: flags.namespace,
      logger,
      metrics,
      events,
      concurrency: flags.concurrency,
      ...(flags.reconcileTimeoutSeconds === undefined ? {} : { reconcileTimeoutMs: flags.reconcileTimeoutSeconds * 1000 }),
      webhook: flags.webhookPort === 0 ? undefined : { port: flags.webhookPort, certDir: flags.webhookCertDir },
      // One observer for every client (one per token): the metrics are registered once.
      metal: { baseUrl: flags.metalApiUrl, rateLimit: flags.metalRateLimit, observer: createPrometheusObserver(metrics.registry) },
      defaultCredentials: flags.metalCredentialsSecret,
      metadataUrl: flags.metadataUrl,
      announcerImage: flags.announcerImage,
      timings: {
        holdTimeoutMs: flags.holdTimeoutSeconds * 1000,
        provisioningEstimateMs: flags.provisioningEstimateSeconds * 1000,
        driftCheckMs: flags.driftCheckIntervalSeconds * 1000,
        bootScriptTimeoutMs: flags.bootScriptTimeoutSeconds * 1000,
      },
    });
    addToManager(manager, runnables);
  },
});
