import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { KubeClient, Manager, silentLogger } from '@metal-l2/kube';
import { makeServingCertificate } from '@metal-l2/test-support/certificates';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, projectCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { addToManager, createNetworkController } from '../src/start.js';

// Readiness sends a pod webhook traffic; with failurePolicy Fail an unready pod refuses every
// linked PacketMachine CREATE. The webhooks read no cache, so no informer may take readiness down.

const kc = loadKubeConfig();
let ns = '';

/** The same API server as a user nobody granted anything: every list and watch is refused. */
function asNobody(config: k8s.KubeConfig): k8s.KubeConfig {
  const user = config.getCurrentUser();
  const cluster = config.getCurrentCluster();
  if (user === null || cluster === null) throw new Error('the test kubeconfig has no current user or cluster');
  const restricted = new k8s.KubeConfig();
  restricted.loadFromOptions({
    clusters: [cluster],
    users: [{ ...user, impersonateUser: 'metal-l2-nobody' }],
    contexts: [{ name: 'nobody', cluster: cluster.name, user: user.name }],
    currentContext: 'nobody',
  });
  return restricted;
}

async function probe(address: string | undefined, path: string): Promise<{ status: number; body: string }> {
  if (address === undefined) throw new Error('probe server not started');
  const res = await fetch(`http://${address}${path}`);
  return { status: res.status, body: await res.text() };
}

beforeAll(async () => {
  await installCrds(kc, [...(await upstreamCrds('capiV1_14')), ...(await upstreamCrds('capp')), ...(await projectCrds())]);
  ns = await createTestNamespace(kc, 'net-ready');
}, 120_000);
afterAll(async () => {
  await deleteTestNamespace(kc, ns);
});

describe('network controller readiness', () => {
  test('is the webhook serving: informers that never sync (any of them: the MachineHealthCheck one when served) do not make the pod unready', async () => {
    const logger = silentLogger();
    const client = KubeClient.fromKubeConfig(asNobody(kc));
    const certs = await makeServingCertificate();
    const runnables = await createNetworkController({
      client,
      kubeConfig: kc,
      namespace: ns,
      logger,
      webhook: { port: 0, certDir: certs.certDir, host: '127.0.0.1' },
    });
    const manager = new Manager({ logger, healthProbeBindAddress: '127.0.0.1:0', handleSignals: false, processMetrics: false });
    addToManager(manager, runnables);
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      const ready = await waitFor(
        'the pod ready',
        async () => {
          if (manager.probeAddress() === undefined) return undefined;
          const answer = await probe(manager.probeAddress(), '/readyz?verbose');
          return answer.status === 200 ? answer : undefined;
        },
        { timeoutMs: timeouts.watchEvent },
      );
      expect(ready.body).toContain('[+]webhook-serving ok');
      // Ready while every cache is refused: not one informer has synced.
      expect(runnables.informers.length).toBeGreaterThan(5);
      expect(runnables.informers.filter((i) => i.hasSynced()).map((i) => i.type.plural)).toEqual([]);
    } finally {
      stop.abort();
      await running.catch(() => undefined);
      client.close();
    }
  });
});
