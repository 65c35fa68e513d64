import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig, testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { installCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';

const run = promisify(execFile);
const ipam = { group: 'ipam.cluster.x-k8s.io', version: 'v1beta2' } as const;

// These prove the parts are real: a real API server with CRD validation, watches, optimistic
// concurrency on the status subresource, and a garbage collector; real kubectl and helm.
describe('local control plane', () => {
  const kc = loadKubeConfig();
  const objects = kc.makeApiClient(k8s.CustomObjectsApi);
  let namespace = '';

  beforeAll(async () => {
    await installCrds(kc, [...(await upstreamCrds('capiV1_14')), ...(await upstreamCrds('capp'))]);
    namespace = await createTestNamespace(kc, 'smoke');
  });
  afterAll(async () => {
    await deleteTestNamespace(kc, namespace);
  });

  test('upstream CAPI and CAPP CRDs are Established', async () => {
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    for (const name of [
      'ipaddressclaims.ipam.cluster.x-k8s.io',
      'machines.cluster.x-k8s.io',
      'packetmachines.infrastructure.cluster.x-k8s.io',
    ]) {
      const crd = await ext.readCustomResourceDefinition({ name });
      expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
    }
  });

  test('the API server validates custom resources against the CRD schema', async () => {
    await expect(
      objects.createNamespacedCustomObject({
        ...ipam,
        namespace,
        plural: 'ipaddressclaims',
        body: { apiVersion: 'ipam.cluster.x-k8s.io/v1beta2', kind: 'IPAddressClaim', metadata: { name: 'no-pool' }, spec: {} },
      }),
    ).rejects.toMatchObject({ code: 422 });
  });

  test('an IPAddressClaim is created, seen by a watch and read back', async () => {
    const seen: string[] = [];
    const watch = new k8s.Watch(kc);
    const request = await watch.watch(
      `/apis/${ipam.group}/${ipam.version}/namespaces/${namespace}/ipaddressclaims`,
      {},
      (phase: string, obj: k8s.KubernetesObject) => {
        seen.push(`${phase}:${obj.metadata?.name ?? ''}`);
      },
      () => undefined,
    );
    try {
      await objects.createNamespacedCustomObject({
        ...ipam,
        namespace,
        plural: 'ipaddressclaims',
        body: {
          apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
          kind: 'IPAddressClaim',
          metadata: { name: 'watched' },
          spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'pool' } },
        },
      });
      await waitFor('the watch to deliver ADDED', () => seen.includes('ADDED:watched'), { timeoutMs: timeouts.watchEvent });
      const back = (await objects.getNamespacedCustomObject({ ...ipam, namespace, plural: 'ipaddressclaims', name: 'watched' })) as {
        spec: { poolRef: { kind: string } };
      };
      expect(back.spec.poolRef.kind).toBe('InClusterIPPool');
    } finally {
      request.abort();
    }
  });

  test('a status update with a stale resourceVersion is refused with 409', async () => {
    const created = (await objects.createNamespacedCustomObject({
      ...ipam,
      namespace,
      plural: 'ipaddressclaims',
      body: {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddressClaim',
        metadata: { name: 'stale' },
        spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'pool' } },
      },
    })) as k8s.KubernetesObject & { status?: object };
    const withStatus = { ...created, status: { addressRef: { name: 'first' } } };
    await objects.replaceNamespacedCustomObjectStatus({ ...ipam, namespace, plural: 'ipaddressclaims', name: 'stale', body: withStatus });
    // `created` still carries the resourceVersion from before the first status write.
    const stale = { ...created, status: { addressRef: { name: 'second' } } };
    await expect(
      objects.replaceNamespacedCustomObjectStatus({ ...ipam, namespace, plural: 'ipaddressclaims', name: 'stale', body: stale }),
    ).rejects.toMatchObject({ code: 409 });
  });

  test('the garbage collector deletes objects whose owner was deleted', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const owner = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'owner' } } });
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: {
          name: 'dependent',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '', blockOwnerDeletion: true },
          ],
        },
      },
    });
    await core.deleteNamespacedConfigMap({ namespace, name: 'owner', propagationPolicy: 'Background' });
    await waitFor(
      'the dependent ConfigMap to be garbage-collected',
      async () => {
        try {
          await core.readNamespacedConfigMap({ namespace, name: 'dependent' });
          return false;
        } catch (err: unknown) {
          return err instanceof k8s.ApiException && err.code === 404;
        }
      },
      { timeoutMs: timeouts.garbageCollected },
    );
  });

  test('/version reports the stamped Kubernetes version', async () => {
    const version = await kc.makeApiClient(k8s.VersionApi).getCode();
    expect(version.gitVersion).toMatch(/^v1\.\d+\.\d+$/);
    expect(version.major).toBe('1');
    expect(Number(version.minor)).toBeGreaterThanOrEqual(31);
  });

  test('kubectl and helm talk to the server', async () => {
    const binDir = process.env['METAL_L2_TEST_BIN_DIR'] ?? '';
    const kubeconfig = testKubeconfigPath();
    const kubectl = await run(join(binDir, 'kubectl'), ['--kubeconfig', kubeconfig, 'version', '-o', 'json']);
    const kv = JSON.parse(kubectl.stdout) as { serverVersion?: { gitVersion?: string } };
    expect(kv.serverVersion?.gitVersion).toMatch(/^v1\.\d+\.\d+$/);
    const helm = await run(join(binDir, 'helm'), ['version', '--short']);
    expect(helm.stdout).toMatch(/^v3\.\d+\.\d+/);
    // `helm list` needs the server: it reads release Secrets through the API.
    const list = await run(join(binDir, 'helm'), ['--kubeconfig', kubeconfig, 'list', '--all-namespaces', '-o', 'json']);
    expect(JSON.parse(list.stdout)).toEqual([]);
  });
});
