import { beforeAll, describe, expect, test } from '@jest/globals';
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { makeServingCertificate } from '@metal-l2/test-support/certificates';
import { claimObject, kinds, poolObject } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { poolWebhookPaths } from '../src/webhook/pool-webhook.js';
import { allocationsOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { runController } from './support/running-controller.js';

// The validating webhook, served by the controller over HTTPS and called by the real API server.
const space = useIpamNamespace('ipam-webhook', {
  // The configuration first: with the controller gone it would refuse every pool write.
  beforeTeardown: async () => {
    await admission.deleteValidatingWebhookConfiguration({ name: configName }).catch(() => undefined);
  },
});
const { kc, objects } = space;
const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
let ns = '';
let configName = '';

async function rejection(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err: unknown) {
    if (err instanceof k8s.ApiException) return String(err.body);
    throw err;
  }
  throw new Error('expected the API server to refuse the request');
}

beforeAll(async () => {
  ns = space.ns;
  const { certDir, caBundle } = await makeServingCertificate();
  const controller = space.stopAfterAll(await runController(kc, ns, { webhook: { port: 0, certDir, host: '127.0.0.1' } }));
  const port = controller.webhookPort;
  configName = `metal-l2-test-${ns}`;
  const webhook = (kind: 'InClusterIPPool' | 'GlobalInClusterIPPool'): k8s.V1ValidatingWebhook => ({
    name: `${kind.toLowerCase()}.${ns}.ipam.metal.x-k8s.io`,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    failurePolicy: 'Fail',
    timeoutSeconds: 10,
    clientConfig: { url: `https://127.0.0.1:${port}${poolWebhookPaths[kind]}`, caBundle },
    rules: [
      {
        apiGroups: ['ipam.metal.x-k8s.io'],
        apiVersions: ['v1alpha1'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        resources: [kind === 'InClusterIPPool' ? 'inclusterippools' : 'globalinclusterippools'],
      },
    ],
    // Only this file's objects: other test files share the API server.
    ...(kind === 'InClusterIPPool'
      ? { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } }
      : { objectSelector: { matchLabels: { 'metal-l2-test': ns } } }),
  });
  await admission.createValidatingWebhookConfiguration({
    body: { metadata: { name: configName }, webhooks: [webhook('InClusterIPPool'), webhook('GlobalInClusterIPPool')] },
  });
  // The API server picks up a new configuration asynchronously: wait until it rejects something.
  await waitFor(
    'the webhook to be called',
    async () => {
      try {
        await objects.create(kinds.pool, poolObject('probe', { addresses: ['10.0.0.1', 'fd00::1'], prefix: 24 }, ns));
        await objects.delete(kinds.pool, 'probe', ns);
        return false;
      } catch {
        return true;
      }
    },
    { timeoutMs: timeouts.webhookReady },
  );
});

const vrf = { projectID: '5e0f2c5a-8a3b-4a4e-9d4c-1b2c3d4e5f60', metro: 'da', credentialsSecretRef: { name: 'm' } };

describe('pool validation', () => {
  test.each([
    { name: 'mixed families', spec: { addresses: ['10.0.0.1', 'fd00::1'], prefix: 24 }, want: 'mixed' },
    { name: 'an entry outside the prefix', spec: { addresses: ['10.0.0.1', '10.0.1.1'], prefix: 24 }, want: 'spec.addresses' },
    { name: 'a gateway of the other family', spec: { addresses: ['10.0.0.1'], prefix: 24, gateway: 'fd00::1' }, want: 'spec.gateway' },
    { name: 'a gateway outside the subnet', spec: { addresses: ['10.0.0.1'], prefix: 24, gateway: '10.0.9.1' }, want: 'spec.gateway' },
    { name: 'an IPv4 prefix longer than 32', spec: { addresses: ['10.0.0.1'], prefix: 40 }, want: 'spec.prefix' },
    {
      name: 'a subnet outside the ranges of the VRF to create',
      spec: { addresses: ['10.0.0.1'], prefix: 24, vrf: { ...vrf, create: { name: 'v', ipRanges: ['10.9.0.0/16'] } } },
      want: 'spec.vrf.create.ipRanges',
    },
    {
      name: 'a VRF subnet Metal cannot reserve',
      spec: { addresses: ['10.0.0.1'], prefix: 20, vrf: { ...vrf, create: { name: 'v', ipRanges: ['10.0.0.0/16'] } } },
      want: 'spec.prefix',
    },
    {
      name: 'credentials from another namespace',
      spec: {
        addresses: ['10.0.0.1'],
        prefix: 24,
        vrf: { ...vrf, credentialsSecretRef: { name: 'm', namespace: 'kube-system' }, vrfID: '0b0f2c5a-8a3b-4a4e-9d4c-1b2c3d4e5f60' },
      },
      want: 'spec.vrf.credentialsSecretRef.namespace',
    },
  ])('refuses $name with a message naming the field', async ({ spec, want }) => {
    const message = await rejection(objects.create(kinds.pool, poolObject('bad', spec, ns)));
    expect(message).toContain('admission webhook');
    expect(message.toLowerCase()).toContain(want.toLowerCase());
  });

  test('refuses a pool overlapping another in the namespace, and global pools overlapping each other', async () => {
    await objects.create(kinds.pool, poolObject('first', { addresses: ['10.20.0.10-10.20.0.20'], prefix: 24 }, ns));
    // The webhook compares against the pools in the controller's cache: once the controller has
    // reconciled 'first', its cache holds it (a pool created in the same instant can pass the
    // webhook; the pools' conditions report the overlap then, overlapping-pools.test.ts).
    await waitFor('first reconciled', async () => (await objects.get(kinds.pool, 'first', ns))?.status?.ipAddresses !== undefined, {
      timeoutMs: timeouts.claimBound,
    });
    expect(
      await rejection(objects.create(kinds.pool, poolObject('second', { addresses: ['10.20.0.15-10.20.0.30'], prefix: 24 }, ns))),
    ).toContain(`InClusterIPPool ${ns}/first`);
    const global = (name: string): ReturnType<typeof poolObject> => ({
      metadata: { name, labels: { 'metal-l2-test': ns } },
      spec: { addresses: ['10.21.0.0/28'], prefix: 24 },
    });
    await objects.create(kinds.globalPool, global(`${ns}-g1`));
    try {
      expect(await rejection(objects.create(kinds.globalPool, global(`${ns}-g2`)))).toContain(`GlobalInClusterIPPool ${ns}-g1`);
    } finally {
      await objects.delete(kinds.globalPool, `${ns}-g1`);
    }
  });

  test('refuses shrinking a pool below its allocations, and deleting it while claims hold addresses', async () => {
    await objects.create(kinds.pool, poolObject('used', { addresses: ['10.22.0.10-10.22.0.20'], prefix: 24 }, ns));
    await objects.create(kinds.claim(), claimObject('user-1', ns, { pool: 'used' }));
    await waitFor('user-1 bound', async () => (await objects.get(kinds.address(), 'user-1', ns)) !== undefined, {
      timeoutMs: timeouts.claimBound,
    });
    await waitFor(
      'allocation in the pool’s blocks',
      async () => (await allocationsOf(objects, await objects.get(kinds.pool, 'used', ns)))['10.22.0.10'] === 'user-1',
      {
        timeoutMs: timeouts.claimBound,
      },
    );
    expect(await rejection(objects.patch(kinds.pool, 'used', ns, { spec: { addresses: ['10.22.0.15-10.22.0.20'] } }))).toContain(
      '10.22.0.10',
    );
    expect(await rejection(objects.delete(kinds.pool, 'used', ns))).toContain('user-1 (10.22.0.10)');
    await objects.delete(kinds.claim(), 'user-1', ns);
    await waitFor(
      'allocation released',
      async () => (await allocationsOf(objects, await objects.get(kinds.pool, 'used', ns)))['10.22.0.10'] === undefined,
      {
        timeoutMs: timeouts.claimBound,
      },
    );
    await objects.delete(kinds.pool, 'used', ns);
    await waitFor('pool gone', async () => (await objects.get(kinds.pool, 'used', ns)) === undefined, { timeoutMs: timeouts.claimBound });
  });
});

describe('pool deletion', () => {
  test('a deleting pool that no longer passes the rules still loses its finalizer (only spec changes are validated)', async () => {
    const labeled = { 'metal-l2-test': ns };
    const validated = `${ns}-stale`;
    const unvalidated = `${ns}-later`;
    await objects.create(kinds.globalPool, {
      metadata: { name: validated, labels: labeled },
      spec: { addresses: ['10.23.0.0/28'], prefix: 24 },
    });
    try {
      await waitFor(
        'the controller added its finalizer',
        async () => (await objects.get(kinds.globalPool, validated))?.metadata.finalizers?.includes('ipam.metal.x-k8s.io/protect-pool'),
        {
          timeoutMs: timeouts.claimBound,
        },
      );
      // A pool the webhook never saw (no test label) overlaps it: the first pool now fails the
      // overlap rule, as a pool made under older rules would.
      await objects.create(kinds.globalPool, { metadata: { name: unvalidated }, spec: { addresses: ['10.23.0.8/29'], prefix: 24 } });
      await objects.delete(kinds.globalPool, validated);
      await waitFor('the deleting pool gone', async () => (await objects.get(kinds.globalPool, validated)) === undefined, {
        timeoutMs: timeouts.claimBound,
      });
    } finally {
      await objects.delete(kinds.globalPool, unvalidated).catch(() => undefined);
    }
  });
});

/** Creates an object through the API server and returns the HTTP status and its Warning headers. */
async function createWithWarnings(path: string, body: object): Promise<{ status: number; warnings: string }> {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('the test kubeconfig has no current cluster');
  const url = new URL(`${cluster.server}${path}`);
  const options: https.RequestOptions = {
    method: 'POST',
    hostname: url.hostname,
    port: url.port,
    path: url.pathname,
    headers: { 'Content-Type': 'application/json' },
  };
  await kc.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const request = https.request(options, (response) => {
      response.resume();
      response.on('end', () => {
        const header = response.headers['warning'];
        resolve({ status: response.statusCode ?? 0, warnings: Array.isArray(header) ? header.join('\n') : (header ?? '') });
      });
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

describe('pool capacity', () => {
  const path = (): string => `/apis/ipam.metal.x-k8s.io/v1alpha1/namespaces/${ns}/inclusterippools`;
  const pool = (name: string, addresses: string[], prefix: number): object => ({
    apiVersion: 'ipam.metal.x-k8s.io/v1alpha1',
    kind: 'InClusterIPPool',
    ...poolObject(name, { addresses, prefix }, ns),
  });

  test('a pool of any size is created without a capacity warning: its allocations live in blocks, not in its own object', async () => {
    // Before blocks, a /14 was answered with "its status fits ~16,000 allocations".
    const big = await createWithWarnings(path(), pool('capacity-big', ['10.220.0.0/14'], 14));
    expect(big.status).toBe(201);
    expect(big.warnings).toBe('');
  });
});
