import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { makeServingCertificate } from '@metal-l2/test-support/certificates';
import { testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { parse, stringify } from 'yaml';
import { builtinTypes, KubeApiError, KubeClient, loadKubeConfig } from '../src/index.js';

// loadKubeConfig reads simple kubeconfigs itself (client-node's KubeConfig module would load all of
// client-node's generated API into the controller) and hands everything else to client-node.
describe('loadKubeConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metal-l2-kubeconfig-'));
  const original = parse(readFileSync(testKubeconfigPath(), 'utf8')) as {
    clusters: { cluster: Record<string, unknown> }[];
    users: { user: Record<string, unknown> }[];
  };
  const write = (name: string, edit: (doc: typeof original) => void): string => {
    const doc = structuredClone(original);
    edit(doc);
    const file = join(dir, name);
    writeFileSync(file, stringify(doc));
    return file;
  };
  const readDefaultNamespace = async (file: string): Promise<unknown> => {
    const client = KubeClient.fromKubeConfig(await loadKubeConfig({ kubeconfig: file }));
    try {
      return (await client.get(builtinTypes.namespace, { name: 'default' }))?.metadata.name;
    } finally {
      client.close();
    }
  };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('reads a token + CA kubeconfig without client-node, and the server accepts what it sends', async () => {
    const access = await loadKubeConfig({ kubeconfig: testKubeconfigPath() });
    expect(access).not.toBeInstanceOf(KubeConfig);
    expect(access.getCurrentCluster()?.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(await readDefaultNamespace(testKubeconfigPath())).toBe('default');
  });

  test('a CA file relative to the kubeconfig and a token file', async () => {
    const cluster = original.clusters[0]!.cluster;
    writeFileSync(join(dir, 'ca.crt'), Buffer.from(String(cluster['certificate-authority-data']), 'base64'));
    writeFileSync(join(dir, 'token'), String(original.users[0]!.user['token']));
    const file = write('files.yaml', (doc) => {
      delete doc.clusters[0]!.cluster['certificate-authority-data'];
      doc.clusters[0]!.cluster['certificate-authority'] = 'ca.crt';
      delete doc.users[0]!.user['token'];
      doc.users[0]!.user['token-file'] = join(dir, 'token');
    });
    expect(await readDefaultNamespace(file)).toBe('default');
  });

  test('sends the token it read: a wrong one is refused', async () => {
    const file = write('wrong-token.yaml', (doc) => {
      doc.users[0]!.user['token'] = 'not-the-token';
    });
    await expect(readDefaultNamespace(file)).rejects.toMatchObject({ status: 401 });
    await expect(readDefaultNamespace(file)).rejects.toBeInstanceOf(KubeApiError);
  });

  test('verifies the server against the CA it read: another CA fails the TLS handshake', async () => {
    // A throw-away CA that never signed the API server's certificate.
    const { certDir, caBundle } = await makeServingCertificate();
    rmSync(certDir, { recursive: true, force: true });
    const file = write('wrong-ca.yaml', (doc) => {
      doc.clusters[0]!.cluster['certificate-authority-data'] = caBundle;
    });
    await expect(readDefaultNamespace(file)).rejects.toThrow(/certificate/i);
  });

  test('in a pod: the Service from the environment, the CA and the token (trailing newline and all) from the mount', async () => {
    const cluster = original.clusters[0]!.cluster;
    const server = new URL(String(cluster['server']));
    const mount = join(dir, 'serviceaccount');
    mkdirSync(mount);
    writeFileSync(join(mount, 'ca.crt'), Buffer.from(String(cluster['certificate-authority-data']), 'base64'));
    writeFileSync(join(mount, 'token'), `${String(original.users[0]!.user['token'])}\n`);
    const saved = { host: process.env['KUBERNETES_SERVICE_HOST'], port: process.env['KUBERNETES_SERVICE_PORT'] };
    process.env['KUBERNETES_SERVICE_HOST'] = server.hostname;
    process.env['KUBERNETES_SERVICE_PORT'] = server.port;
    try {
      const access = await loadKubeConfig({ serviceAccountDir: mount });
      expect(access).not.toBeInstanceOf(KubeConfig);
      expect(access.getCurrentCluster()?.server).toBe(`https://${server.hostname}:${server.port}`);
      const client = KubeClient.fromKubeConfig(access);
      try {
        expect((await client.get(builtinTypes.namespace, { name: 'default' }))?.metadata.name).toBe('default');
      } finally {
        client.close();
      }
    } finally {
      for (const [name, value] of [
        ['KUBERNETES_SERVICE_HOST', saved.host],
        ['KUBERNETES_SERVICE_PORT', saved.port],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  test('hands a kubeconfig with an exec plugin to client-node', async () => {
    const file = write('exec.yaml', (doc) => {
      delete doc.users[0]!.user['token'];
      doc.users[0]!.user['exec'] = {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: 'sh',
        args: ['-c', `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$T"`],
        env: [{ name: 'T', value: String(original.users[0]!.user['token']) }],
        interactiveMode: 'Never',
      };
    });
    expect(await loadKubeConfig({ kubeconfig: file })).toBeInstanceOf(KubeConfig);
    expect(await readDefaultNamespace(file)).toBe('default');
  });
});
