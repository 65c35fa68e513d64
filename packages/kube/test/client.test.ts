import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { builtinTypes, isAlreadyExists, isConflict, isInvalid, KubeApiError, KubeClient } from '../src/index.js';
import { claimType, newClaim, newConfigMap, type ConfigMap, type IPAddressClaim } from './fixtures.js';

describe('KubeClient against the API server', () => {
  const kc = loadKubeConfig();
  const client = KubeClient.fromKubeConfig(kc, { fieldManager: 'metal-l2-kube-test' });
  let ns = '';

  beforeAll(async () => {
    await installCrds(kc, await upstreamCrds('capiV1_14'));
    ns = await createTestNamespace(kc, 'kube-client');
  });
  afterAll(async () => {
    await deleteTestNamespace(kc, ns);
    client.close();
  });

  test('creates, reads, replaces, patches and deletes a core object', async () => {
    const created = await client.create<ConfigMap>(builtinTypes.configMap, newConfigMap(ns, 'crud', { a: '1' }));
    expect(created).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: ns, name: 'crud' }, data: { a: '1' } });

    const read = await client.get<ConfigMap>(builtinTypes.configMap, { namespace: ns, name: 'crud' });
    expect(read?.metadata.uid).toBe(created.metadata.uid);
    // Objects are the JSON the server sent: timestamps are RFC 3339 strings (ObjectMeta says so).
    expect(read?.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(typeof read?.metadata.managedFields?.[0]?.time).toBe('string');

    const replaced = await client.replace<ConfigMap>(builtinTypes.configMap, { ...created, data: { a: '2' } });
    expect(replaced.data).toEqual({ a: '2' });

    const patched = await client.patch<ConfigMap>(builtinTypes.configMap, { namespace: ns, name: 'crud' }, { data: { a: null, b: '3' } });
    expect(patched.data).toEqual({ b: '3' });

    expect(await client.delete(builtinTypes.configMap, { namespace: ns, name: 'crud' })).toBe(true);
    expect(await client.delete(builtinTypes.configMap, { namespace: ns, name: 'crud' })).toBe(false);
    expect(await client.get(builtinTypes.configMap, { namespace: ns, name: 'crud' })).toBeUndefined();
  });

  test('a replace with a stale resourceVersion fails with Conflict naming the object', async () => {
    const first = await client.create<ConfigMap>(builtinTypes.configMap, newConfigMap(ns, 'stale-replace'));
    await client.replace<ConfigMap>(builtinTypes.configMap, { ...first, data: { winner: 'yes' } });
    const err = await client.replace<ConfigMap>(builtinTypes.configMap, { ...first, data: { loser: 'yes' } }).catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).message).toContain(`replace ConfigMap ${ns}/stale-replace: `);
    expect((err as KubeApiError).status).toBe(409);
  });

  test('a merge patch carrying a stale resourceVersion fails with Conflict; a current one succeeds', async () => {
    const obj = await client.create<ConfigMap>(builtinTypes.configMap, newConfigMap(ns, 'stale-patch'));
    const key = { namespace: ns, name: 'stale-patch' };
    const moved = await client.patch<ConfigMap>(
      builtinTypes.configMap,
      key,
      { data: { x: '1' } },
      { resourceVersion: obj.metadata.resourceVersion ?? '' },
    );
    await expect(
      client.patch(builtinTypes.configMap, key, { data: { y: '1' } }, { resourceVersion: obj.metadata.resourceVersion ?? '' }),
    ).rejects.toMatchObject({
      reason: 'Conflict',
    });
    const current = await client.patch<ConfigMap>(
      builtinTypes.configMap,
      key,
      { data: { y: '1' } },
      { resourceVersion: moved.metadata.resourceVersion ?? '' },
    );
    expect(current.data).toEqual({ x: '1', y: '1' });
  });

  test('a client bound to a signal sends nothing once it aborted; the client it came from is unaffected', async () => {
    const stop = new AbortController();
    const bound = client.withSignal(stop.signal);
    await bound.create<ConfigMap>(builtinTypes.configMap, newConfigMap(ns, 'bound', { a: '1' }));
    stop.abort(new Error('lost leadership'));
    const err = await bound
      .patch<ConfigMap>(builtinTypes.configMap, { namespace: ns, name: 'bound' }, { data: { a: '2' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    // Cancelled, not timed out: the reconcile was stopped, the server did nothing wrong.
    expect((err as KubeApiError).reason).not.toBe('Timeout');
    expect((await client.get<ConfigMap>(builtinTypes.configMap, { namespace: ns, name: 'bound' }))?.data).toEqual({ a: '1' });
  });

  test('creating an existing object fails with AlreadyExists', async () => {
    await client.create(builtinTypes.configMap, newConfigMap(ns, 'twice'));
    const err = await client.create(builtinTypes.configMap, newConfigMap(ns, 'twice')).catch((e: unknown) => e);
    expect(isAlreadyExists(err)).toBe(true);
    expect(isConflict(err)).toBe(false);
  });

  test('custom resources: status subresource writes are guarded and separate from spec', async () => {
    const claim = await client.create<IPAddressClaim>(claimType, newClaim(ns, 'status-claim'));
    const key = { namespace: ns, name: 'status-claim' };
    expect(claim.status).toBeUndefined();

    // A status in the main resource is ignored by the API server (status subresource).
    const ignored = await client.patch<IPAddressClaim>(claimType, key, { status: { addressRef: { name: 'nope' } } });
    expect(ignored.status).toBeUndefined();

    const withStatus = await client.patchStatus<IPAddressClaim>(
      claimType,
      key,
      { status: { addressRef: { name: 'status-claim' } } },
      { resourceVersion: ignored.metadata.resourceVersion ?? '' },
    );
    expect(withStatus.status?.addressRef).toEqual({ name: 'status-claim' });
    await expect(
      client.patchStatus(
        claimType,
        key,
        { status: { addressRef: { name: 'other' } } },
        { resourceVersion: ignored.metadata.resourceVersion ?? '' },
      ),
    ).rejects.toMatchObject({ reason: 'Conflict' });

    const replaced = await client.replaceStatus<IPAddressClaim>(claimType, { ...withStatus, status: { addressRef: { name: 'replaced' } } });
    expect(replaced.status?.addressRef).toEqual({ name: 'replaced' });
    await expect(client.replaceStatus(claimType, { ...withStatus, status: { addressRef: { name: 'late' } } })).rejects.toMatchObject({
      reason: 'Conflict',
    });
  });

  test('an object the schema rejects fails with Invalid and the field causes', async () => {
    const bad = { ...newClaim(ns, 'bad-claim'), spec: { poolRef: { apiGroup: 'x', kind: '', name: 'p' } } };
    const err = await client.create(claimType, bad).catch((e: unknown) => e);
    expect(isInvalid(err)).toBe(true);
    expect((err as KubeApiError).causes.map((c) => c.field)).toContain('spec.poolRef.kind');
    expect((err as KubeApiError).action).toBe(`create IPAddressClaim ${ns}/bad-claim`);
  });

  test('list follows continue tokens across pages and filters by label', async () => {
    for (let i = 0; i < 7; i++) {
      await client.create<ConfigMap>(builtinTypes.configMap, {
        ...newConfigMap(ns, `page-${i}`),
        metadata: { namespace: ns, name: `page-${i}`, labels: { set: 'paged' } },
      });
    }
    const all = await client.list<ConfigMap>(builtinTypes.configMap, { namespace: ns, labelSelector: 'set=paged', limit: 2 });
    expect(all.items.map((c) => c.metadata.name).sort()).toEqual(['page-0', 'page-1', 'page-2', 'page-3', 'page-4', 'page-5', 'page-6']);
    expect(all.items.every((c) => c.kind === 'ConfigMap' && c.apiVersion === 'v1')).toBe(true);
    expect(Number(all.resourceVersion)).toBeGreaterThan(0);

    // mapItem sees each item as its page arrives (kind and apiVersion filled) and its result is kept.
    const seen: string[] = [];
    const mapped = await client.list<ConfigMap>(builtinTypes.configMap, {
      namespace: ns,
      labelSelector: 'set=paged',
      limit: 2,
      mapItem: (item) => {
        seen.push(`${item.apiVersion}/${item.kind}/${item.metadata.name ?? ''}`);
        return { ...item, data: { mapped: 'yes' } };
      },
    });
    expect(seen.sort()).toEqual(all.items.map((c) => `v1/ConfigMap/${c.metadata.name ?? ''}`).sort());
    expect(mapped.items.every((c) => c.data?.['mapped'] === 'yes')).toBe(true);
  });

  test('delete honours uid and resourceVersion preconditions', async () => {
    const obj = await client.create<ConfigMap>(builtinTypes.configMap, newConfigMap(ns, 'precondition'));
    const key = { namespace: ns, name: 'precondition' };
    await expect(client.delete(builtinTypes.configMap, key, { preconditions: { uid: 'not-the-uid' } })).rejects.toMatchObject({
      reason: 'Conflict',
    });
    await client.patch(builtinTypes.configMap, key, { data: { moved: 'on' } });
    await expect(client.delete(builtinTypes.configMap, key, { resourceVersion: obj.metadata.resourceVersion ?? '' })).rejects.toMatchObject(
      { reason: 'Conflict' },
    );
    expect(await client.delete(builtinTypes.configMap, key, { uid: obj.metadata.uid ?? '', propagationPolicy: 'Foreground' })).toBe(true);
  });

  test('discovery reports served versions and picks the preferred candidate', async () => {
    const served = await client.servedVersions('ipam.cluster.x-k8s.io');
    expect(served[0]).toBe('v1beta2');
    expect(served).toEqual(expect.arrayContaining(['v1beta1', 'v1beta2']));
    expect(await client.preferredVersion('ipam.cluster.x-k8s.io', ['v1beta3', 'v1beta2', 'v1beta1'])).toBe('v1beta2');
    expect(await client.preferredVersion('ipam.cluster.x-k8s.io', ['v1beta1', 'v1beta2'])).toBe('v1beta1');
    expect(await client.preferredVersion('nothing.example.com', ['v1'])).toBeUndefined();
    expect(await client.servedVersions('')).toEqual(['v1']);
    expect(await client.servedResources('ipam.cluster.x-k8s.io', 'v1beta2')).toEqual(
      expect.arrayContaining(['ipaddressclaims', 'ipaddressclaims/status']),
    );
  });

  test('errors from a missing API name the attempt', async () => {
    const ghost = { group: 'ghost.example.com', version: 'v1', kind: 'Ghost', plural: 'ghosts', namespaced: true };
    const err = await client.list(ghost, { namespace: ns }).catch((e: unknown) => e);
    expect(err).toMatchObject({ reason: 'NotFound', status: 404, action: `list Ghost in ${ns}` });
  });
});
