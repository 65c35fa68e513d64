import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { makeServingCertificate } from '@metal-l2/test-support/certificates';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { builtinTypes, KubeClient } from '../src/index.js';
import { newConfigMap, type ConfigMap } from './fixtures.js';

// A request the API server holds: a create that waits on a validating webhook which never answers
// (the API server gives up after the webhook's 10 s). Our client must give up first, on its own.
describe('requests other than watches time out', () => {
  const kc = loadKubeConfig();
  const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  let ns = '';
  let server: Server | undefined;
  let hanging = false;
  const configName = `metal-l2-kube-timeout-${process.pid}`;

  beforeAll(async () => {
    ns = await createTestNamespace(kc, 'kube-timeout');
    const { certDir, caBundle } = await makeServingCertificate();
    const [cert, key] = await Promise.all([readFile(join(certDir, 'tls.crt')), readFile(join(certDir, 'tls.key'))]);
    server = createServer({ cert, key }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (hanging) return;
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string } };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: { uid: review.request.uid, allowed: false, status: { message: 'probe' } },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await admission.createValidatingWebhookConfiguration({
      body: {
        metadata: { name: configName },
        webhooks: [
          {
            name: `hang.${ns}.kubetest.metal-l2.io`,
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            failurePolicy: 'Fail',
            timeoutSeconds: 10,
            clientConfig: { url: `https://127.0.0.1:${port}/`, caBundle },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
            objectSelector: { matchLabels: { 'kubetest.metal-l2.io/hold': 'true' } },
          },
        ],
      },
    });
    const probe = KubeClient.fromKubeConfig(kc);
    try {
      // The configuration takes effect asynchronously: wait until the webhook refuses a create.
      await waitFor(
        'the webhook to be called',
        async () => {
          const obj = {
            ...newConfigMap(ns, 'probe'),
            metadata: { namespace: ns, name: 'probe', labels: { 'kubetest.metal-l2.io/hold': 'true' } },
          };
          try {
            await probe.create<ConfigMap>(builtinTypes.configMap, obj);
            await probe.delete(builtinTypes.configMap, { namespace: ns, name: 'probe' });
            return false;
          } catch (err: unknown) {
            return String(err).includes('probe');
          }
        },
        { timeoutMs: timeouts.webhookReady },
      );
    } finally {
      probe.close();
    }
    hanging = true;
  });
  afterAll(async () => {
    await admission.deleteValidatingWebhookConfiguration({ name: configName }).catch(() => undefined);
    server?.closeAllConnections();
    server?.close();
    await deleteTestNamespace(kc, ns);
  });

  test('a create the API server holds ends after requestTimeoutMs with a Timeout error', async () => {
    const client = new KubeClient({ kubeConfig: kc, requestTimeoutMs: 1_000 });
    try {
      const startedAt = Date.now();
      const obj = {
        ...newConfigMap(ns, 'held'),
        metadata: { namespace: ns, name: 'held', labels: { 'kubetest.metal-l2.io/hold': 'true' } },
      };
      const err = await client.create<ConfigMap>(builtinTypes.configMap, obj).catch((e: unknown) => e);
      const elapsedMs = Date.now() - startedAt;
      expect(err).toMatchObject({ reason: 'Timeout', action: `create ConfigMap ${ns}/held` });
      expect(elapsedMs).toBeLessThan(5_000);
      // The client still works after a timed-out request.
      expect(await client.get(builtinTypes.configMap, { namespace: ns, name: 'held' })).toBeUndefined();
    } finally {
      client.close();
    }
  });
});
