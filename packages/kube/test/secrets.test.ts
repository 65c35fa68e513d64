import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { builtinTypes, KubeClient, readSecretValue, type KubeObject } from '../src/index.js';

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

/** The same API server as a user nobody granted anything: every read is Forbidden. */
function asNobody(kc: k8s.KubeConfig): k8s.KubeConfig {
  const restricted = new k8s.KubeConfig();
  const user = kc.getCurrentUser();
  const cluster = kc.getCurrentCluster();
  if (user === null || cluster === null) throw new Error('the test kubeconfig has no current user or cluster');
  restricted.loadFromOptions({
    clusters: [cluster],
    users: [{ ...user, impersonateUser: 'metal-l2-nobody' }],
    contexts: [{ name: 'nobody', cluster: cluster.name, user: user.name }],
    currentContext: 'nobody',
  });
  return restricted;
}

describe('readSecretValue against the API server', () => {
  const kc = loadKubeConfig();
  const client = KubeClient.fromKubeConfig(kc, { fieldManager: 'metal-l2-kube-test' });
  const nobody = KubeClient.fromKubeConfig(asNobody(kc));
  let ns = '';
  const b64 = (s: string): string => Buffer.from(s).toString('base64');

  beforeAll(async () => {
    ns = await createTestNamespace(kc, 'kube-secrets');
    await client.create<Secret>(builtinTypes.secret, {
      metadata: { namespace: ns, name: 'metal' },
      data: { apiToken: b64('s3cret-token\n'), empty: b64('  \n'), blank: '' },
    });
  });
  afterAll(async () => {
    await deleteTestNamespace(kc, ns);
    client.close();
    nobody.close();
  });

  const found = (value: string) => ({ kind: 'found', value, where: 'Secret NS/metal' });
  const missing = (message: string) => ({ kind: 'missing', message });
  test.each([
    { name: 'a value, trimmed', secret: 'metal', dataKey: 'apiToken', trim: true, want: found('s3cret-token') },
    { name: 'a value as stored', secret: 'metal', dataKey: 'apiToken', trim: false, want: found('s3cret-token\n') },
    { name: 'an absent Secret', secret: 'gone', dataKey: 'apiToken', trim: true, want: missing('Secret NS/gone not found') },
    { name: 'an absent key', secret: 'metal', dataKey: 'token', trim: true, want: missing('Secret NS/metal has no key token') },
    { name: 'a whitespace-only value', secret: 'metal', dataKey: 'empty', trim: true, want: missing('Secret NS/metal has an empty empty') },
    { name: 'an empty value', secret: 'metal', dataKey: 'blank', trim: false, want: missing('Secret NS/metal has an empty blank') },
  ])('$name', async ({ secret, dataKey, trim, want }) => {
    const got = await readSecretValue(client, { namespace: ns, name: secret }, { dataKey, trim });
    expect(JSON.parse(JSON.stringify(got).replaceAll(ns, 'NS'))).toEqual(want);
  });

  test('a Secret the client may not read is reported, not thrown, and the message holds no value', async () => {
    const got = await readSecretValue(nobody, { namespace: ns, name: 'metal' }, { dataKey: 'apiToken' });
    expect(got).toEqual({ kind: 'missing', message: `the controller may not read Secret ${ns}/metal (RBAC: get secrets)` });
    expect(JSON.stringify(got)).not.toContain('s3cret');
  });
});
