import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import type { OwnedControlPlane } from '@metal-l2/local-control-plane';
import { createLogger } from '@metal-l2/kube';
import { startIpamController } from '../../packages/ipam-controller/src/start.js';
import { createTestNamespace, loadKubeConfig } from '../support/cluster.js';
import { installCrds, upstreamCrds } from '../support/crds.js';
import { Objects, claimObject, kinds, poolObject } from '../support/objects.js';
import { repoRoot } from '../support/paths.js';
import { startPrivateControlPlane, stopPrivateControlPlane } from '../support/test-control-planes.js';
import { timeouts } from '../support/timeouts.js';
import { waitFor } from '../support/wait-for.js';

const run = promisify(execFile);
const chart = join(repoRoot, 'charts', 'metal-l2');

// The chart on its own control plane: its webhook configuration points at a Service no pod backs
// here, which would slow every pool write of the other test files on the shared one.
let plane: OwnedControlPlane | undefined;
let kc: k8s.KubeConfig;
let helm = '';
const releaseNs = 'metal-l2-system';

beforeAll(async () => {
  plane = await startPrivateControlPlane('chart');
  kc = loadKubeConfig(plane.state.kubeconfig);
  helm = join(plane.binDir, 'helm');
  await installCrds(kc, await upstreamCrds('capiV1_14'));
});
afterAll(async () => {
  await stopPrivateControlPlane(plane);
});

describe('helm chart', () => {
  test('lints cleanly', async () => {
    const { stdout } = await run(helm, ['lint', '--strict', chart]);
    expect(stdout).toContain('0 chart(s) failed');
  });

  test('installs with its CRDs, a manager container and a webhook configuration carrying the CA', async () => {
    await run(helm, ['--kubeconfig', plane?.state.kubeconfig ?? '', 'install', 'metal-l2', chart, '-n', releaseNs, '--create-namespace']);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const deployment = await apps.readNamespacedDeployment({ namespace: releaseNs, name: 'metal-l2-ipam' });
    expect(deployment.spec?.template.spec?.containers.map((c) => c.name)).toEqual(['manager']);
    const webhook = await kc.makeApiClient(k8s.AdmissionregistrationV1Api).readValidatingWebhookConfiguration({ name: 'metal-l2-ipam' });
    expect(webhook.webhooks?.map((w) => w.clientConfig.service?.path).sort()).toEqual([
      '/validate-ipam-metal-x-k8s-io-v1alpha1-globalinclusterippool',
      '/validate-ipam-metal-x-k8s-io-v1alpha1-inclusterippool',
    ]);
    const secret = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ namespace: releaseNs, name: 'metal-l2-webhook-cert' });
    expect(webhook.webhooks?.[0]?.clientConfig.caBundle).toBe(secret.data?.['ca.crt']);
    const crd = await kc.makeApiClient(k8s.ApiextensionsV1Api).readCustomResourceDefinition({ name: 'inclusterippools.ipam.metal.x-k8s.io' });
    expect(crd.metadata?.labels?.['clusterctl.cluster.x-k8s.io/move-hierarchy']).toBe('');
    // An upgrade keeps the generated CA, so the webhook configuration keeps matching the pods' certificate.
    await run(helm, ['--kubeconfig', plane?.state.kubeconfig ?? '', 'upgrade', 'metal-l2', chart, '-n', releaseNs]);
    const after = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ namespace: releaseNs, name: 'metal-l2-webhook-cert' });
    expect(after.data?.['ca.crt']).toBe(secret.data?.['ca.crt']);
  });

  test("the chart's RBAC is enough: the controller runs as its ServiceAccount and binds a claim", async () => {
    // No pods run here, so the webhook cannot answer: take it out of the way for this part.
    await kc.makeApiClient(k8s.AdmissionregistrationV1Api).deleteValidatingWebhookConfiguration({ name: 'metal-l2-ipam' });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const token = await core.createNamespacedServiceAccountToken({ namespace: releaseNs, name: 'metal-l2-ipam', body: { spec: { audiences: [], expirationSeconds: 3600 } } });
    const asController = new k8s.KubeConfig();
    const cluster = kc.getCurrentCluster();
    asController.loadFromOptions({
      clusters: [{ name: 'c', server: cluster?.server ?? '', caData: cluster?.caData }],
      users: [{ name: 'sa', token: token.status?.token }],
      contexts: [{ name: 'c', cluster: 'c', user: 'sa' }],
      currentContext: 'c',
    });
    const ns = await createTestNamespace(kc, 'chart-rbac');
    const controller = await startIpamController({ kubeConfig: asController, logger: createLogger({ silent: true }), leaderElection: false });
    try {
      const objects = new Objects(kc);
      await objects.create(kinds.pool, poolObject('p', { addresses: ['10.70.0.10-10.70.0.20'], prefix: 24 }, ns));
      await objects.create(kinds.claim(), claimObject('c', ns, { pool: 'p' }));
      const address = await waitFor('claim bound by the ServiceAccount', async () => objects.get(kinds.address(), 'c', ns), { timeoutMs: timeouts.claimBound });
      expect(address.spec.address).toBe('10.70.0.10');
    } finally {
      await controller.stop();
    }
  });
});
