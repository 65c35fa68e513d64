import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { makeServingCertificate } from '@metal-l2/test-support/certificates';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { builtinTypes, KubeClient, type Lease } from '../src/index.js';

/** The API server refusing writes to chosen Leases, as an outage or a lost permission would. */
export interface LeaseRefusal {
  /** From now on every update of this Lease is refused (admission denies it). */
  refuse(name: string): void;
  close(): Promise<void>;
}

interface Review {
  request: { uid: string; name?: string };
}

/**
 * A validating webhook on Lease updates in `namespace`: it lets everything through until told to
 * refuse a Lease by name. Resolves once the API server calls it (the configuration takes effect
 * asynchronously).
 */
export async function startLeaseRefusal(kc: k8s.KubeConfig, namespace: string): Promise<LeaseRefusal> {
  const refused = new Set<string>();
  const { certDir, caBundle } = await makeServingCertificate();
  const [cert, key] = await Promise.all([readFile(join(certDir, 'tls.crt')), readFile(join(certDir, 'tls.key'))]);
  const server: Server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
      const name = review.request.name ?? '';
      const allowed = !refused.has(name);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: review.request.uid, allowed, ...(allowed ? {} : { status: { message: `lease ${name} refused by the test` } }) },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  const configName = `metal-l2-lease-refusal-${namespace}`;
  await admission.createValidatingWebhookConfiguration({
    body: {
      metadata: { name: configName },
      webhooks: [
        {
          name: `leases.${namespace}.kubetest.metal-l2.io`,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 5,
          clientConfig: { url: `https://127.0.0.1:${port}/`, caBundle },
          rules: [{ apiGroups: ['coordination.k8s.io'], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['leases'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
        },
      ],
    },
  });
  const close = async (): Promise<void> => {
    await admission.deleteValidatingWebhookConfiguration({ name: configName }).catch(() => undefined);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  // Wait until the API server consults the webhook: a probe Lease whose update it refuses.
  const client = KubeClient.fromKubeConfig(kc);
  try {
    const probe = 'lease-refusal-probe';
    refused.add(probe);
    await client.create<Lease>(builtinTypes.lease, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { namespace, name: probe },
      spec: {},
    });
    await waitFor(
      'the lease webhook to be called',
      async () => {
        const current = await client.get<Lease>(builtinTypes.lease, { namespace, name: probe });
        if (current === undefined) return false;
        try {
          await client.replace(builtinTypes.lease, { ...current, spec: { holderIdentity: 'probe' } });
          return false;
        } catch (err: unknown) {
          return String(err).includes('refused by the test');
        }
      },
      { timeoutMs: timeouts.webhookReady },
    );
  } catch (err: unknown) {
    await close();
    throw err;
  } finally {
    client.close();
  }
  return { refuse: (name) => refused.add(name), close };
}
