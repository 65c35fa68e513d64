import * as k8s from '@kubernetes/client-node';

/** The kubeconfig of this run's control plane, written by the global setup. */
export function testKubeconfigPath(): string {
  const path = process.env['METAL_L2_TEST_KUBECONFIG'];
  if (path === undefined || path === '') {
    throw new Error('METAL_L2_TEST_KUBECONFIG is not set: integration tests run through the jest global setup (npm test)');
  }
  return path;
}

export function loadKubeConfig(path = testKubeconfigPath()): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

/** Creates a namespace with a generated name for one test file; delete it in afterAll. */
export async function createTestNamespace(kc: k8s.KubeConfig, prefix: string): Promise<string> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const ns = await core.createNamespace({ body: { metadata: { generateName: `${prefix}-` } } });
  const name = ns.metadata?.name;
  if (name === undefined) throw new Error('the API server returned a namespace without a name');
  return name;
}

export async function deleteTestNamespace(kc: k8s.KubeConfig, name: string): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.deleteNamespace({ name }).catch((err: unknown) => {
    if (!(err instanceof k8s.ApiException && err.code === 404)) throw err;
  });
}
