import { beforeAll, describe, expect, test } from '@jest/globals';
import { claimObject, kinds, poolObject, readyCondition, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { boundAddress as bound, expectUnallocated, sentinelBound } from './support/claims.js';
import { runController } from './support/running-controller.js';
import { allocationsOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';

// The CAPI IPAM contract checklist (../shared/research/ipam-anchors.md (b)) items 7-32 that need no
// CAPI core webhooks, on the real API server with the v1.14 CRDs (IPAM v1beta2).
const space = useIpamNamespace('ipam-claims');
const { kc, objects } = space;
const claimKind = kinds.claim();
const addressKind = kinds.address();
let ns = '';

beforeAll(async () => {
  ns = space.ns;
  space.stopAfterAll(await runController(kc, ns));
});

const addressOf = (a: Obj): string => a.spec.address as string;
const site = () => ({ objects, namespace: ns });
const boundAddress = (claim: string): Promise<Obj> => bound(site(), claim);

describe('allocation', () => {
  test('a claim gets an IPAddress named like it, owned by claim and pool, with finalizers and the cluster label', async () => {
    await objects.create(kinds.cluster(), { metadata: { name: 'c1', namespace: ns }, spec: { paused: false } });
    await objects.create(kinds.pool, poolObject('alloc', { addresses: ['10.0.0.1-10.0.0.254'], prefix: 24, gateway: '10.0.0.2' }, ns));
    const claim = await objects.create(
      claimKind,
      claimObject('alloc-1', ns, { pool: 'alloc', labels: { 'cluster.x-k8s.io/cluster-name': 'c1' } }),
    );
    const address = await boundAddress('alloc-1');
    const pool = await objects.get(kinds.pool, 'alloc', ns);
    expect(address.metadata.name).toBe('alloc-1');
    expect(address.spec).toEqual({
      address: '10.0.0.1',
      prefix: 24,
      gateway: '10.0.0.2',
      claimRef: { name: 'alloc-1' },
      poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'alloc' },
    });
    expect(address.metadata.ownerReferences).toEqual(
      expect.arrayContaining([
        {
          apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
          kind: 'IPAddressClaim',
          name: 'alloc-1',
          uid: claim.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
        {
          apiVersion: 'ipam.metal.x-k8s.io/v1alpha1',
          kind: 'InClusterIPPool',
          name: 'alloc',
          uid: pool?.metadata.uid,
          controller: false,
          blockOwnerDeletion: true,
        },
      ]),
    );
    expect(address.metadata.finalizers).toContain('ipam.metal.x-k8s.io/protect-address');
    expect(address.metadata.labels).toEqual({ 'cluster.x-k8s.io/cluster-name': 'c1' });
    const after = await objects.get(claimKind, 'alloc-1', ns);
    expect(after?.metadata.finalizers).toContain('ipam.metal.x-k8s.io/release-address');
    expect(readyCondition(after)).toMatchObject({ status: 'True', reason: 'AddressAllocated' });
    // The gateway is skipped: the next claim gets 10.0.0.3.
    await objects.create(claimKind, claimObject('alloc-2', ns, { pool: 'alloc' }));
    expect(addressOf(await boundAddress('alloc-2'))).toBe('10.0.0.3');
  });

  test('excluded addresses and the network address are never allocated; allocateReservedIPAddresses allows them', async () => {
    await objects.create(
      kinds.pool,
      poolObject('excl', { addresses: ['10.1.0.0-10.1.0.5'], prefix: 24, excludedAddresses: ['10.1.0.1-10.1.0.2', '10.1.0.4'] }, ns),
    );
    await objects.create(claimKind, claimObject('excl-1', ns, { pool: 'excl' }));
    await objects.create(claimKind, claimObject('excl-2', ns, { pool: 'excl' }));
    expect([addressOf(await boundAddress('excl-1')), addressOf(await boundAddress('excl-2'))].sort()).toEqual(['10.1.0.3', '10.1.0.5']);
    await objects.create(
      kinds.pool,
      poolObject('reserved', { addresses: ['10.2.0.0-10.2.0.1'], prefix: 24, allocateReservedIPAddresses: true }, ns),
    );
    await objects.create(claimKind, claimObject('res-1', ns, { pool: 'reserved' }));
    expect(addressOf(await boundAddress('res-1'))).toBe('10.2.0.0');
  });

  test("a claim for another provider's pool kind is left alone", async () => {
    await objects.create(claimKind, claimObject('foreign', ns, { pool: 'alloc', apiGroup: 'ipam.cluster.x-k8s.io' }));
    // A claim of ours on the same pool name, created after it, is bound: the controller had the
    // foreign claim in view when it decided the pool's claims.
    await sentinelBound(site(), { pool: 'alloc', name: 'foreign-sentinel' });
    const foreign = await objects.get(claimKind, 'foreign', ns);
    expect(foreign?.status).toBeUndefined();
    expect(foreign?.metadata.finalizers ?? []).toEqual([]);
    expect(await objects.get(addressKind, 'foreign', ns)).toBeUndefined();
  });

  test('the requested-address annotation asks for one address', async () => {
    await objects.create(kinds.pool, poolObject('req', { addresses: ['10.3.0.10-10.3.0.20'], prefix: 24 }, ns));
    await objects.create(
      claimKind,
      claimObject('req-1', ns, { pool: 'req', annotations: { 'ipam.metal.x-k8s.io/requested-address': '10.3.0.15' } }),
    );
    expect(addressOf(await boundAddress('req-1'))).toBe('10.3.0.15');
    await objects.create(
      claimKind,
      claimObject('req-2', ns, { pool: 'req', annotations: { 'ipam.metal.x-k8s.io/requested-address': '10.3.0.15' } }),
    );
    const failed = await waitFor(
      'req-2 to fail',
      async () => {
        const c = readyCondition(await objects.get(claimKind, 'req-2', ns));
        return c?.reason === 'AllocationFailed' ? c : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    expect(failed.message).toContain('10.3.0.15 is already allocated');
  });

  test('pool status counts addresses', async () => {
    await objects.create(kinds.pool, poolObject('counts', { addresses: ['10.4.0.10-10.4.0.20'], prefix: 24, gateway: '10.4.0.10' }, ns));
    await objects.create(claimKind, claimObject('count-1', ns, { pool: 'counts' }));
    await objects.create(claimKind, claimObject('count-2', ns, { pool: 'counts' }));
    await boundAddress('count-1');
    await boundAddress('count-2');
    const status = await waitFor(
      'pool counts',
      async () => {
        const p = await objects.get(kinds.pool, 'counts', ns);
        return p?.status?.ipAddresses?.used === 2 ? p.status : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    expect(status.ipAddresses).toEqual({ total: 10, used: 2, free: 8, outOfRange: 0 });
    expect(await allocationsOf(objects, await objects.get(kinds.pool, 'counts', ns))).toEqual({
      '10.4.0.11': 'count-1',
      '10.4.0.12': 'count-2',
    });
    expect(status.allocations).toBeUndefined();
    expect(readyCondition({ metadata: { name: 'counts' }, status })).toMatchObject({ status: 'True', reason: 'PoolReady' });
  });
});

describe('exhaustion and missing pools', () => {
  test('k free addresses and k+1 claims: one waits with PoolExhausted, and binds when an address frees', async () => {
    await objects.create(kinds.pool, poolObject('small', { addresses: ['10.5.0.10-10.5.0.11'], prefix: 24 }, ns));
    for (const n of ['small-1', 'small-2', 'small-3']) await objects.create(claimKind, claimObject(n, ns, { pool: 'small' }));
    await waitFor(
      'two bound and one exhausted',
      async () => {
        const claims = await Promise.all(['small-1', 'small-2', 'small-3'].map((n) => objects.get(claimKind, n, ns)));
        const reasons = claims.map((c) => readyCondition(c)?.reason).sort();
        return JSON.stringify(reasons) === JSON.stringify(['AddressAllocated', 'AddressAllocated', 'PoolExhausted']) ? claims : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    const claims = await Promise.all(['small-1', 'small-2', 'small-3'].map((n) => objects.get(claimKind, n, ns)));
    const waiting = claims.find((c) => readyCondition(c)?.reason === 'PoolExhausted');
    const holder = claims.find((c) => readyCondition(c)?.reason === 'AddressAllocated');
    expect(waiting?.status?.addressRef).toBeUndefined();
    await objects.delete(claimKind, holder?.metadata.name ?? '', ns);
    const freed = await boundAddress(waiting?.metadata.name ?? '');
    expect(['10.5.0.10', '10.5.0.11']).toContain(addressOf(freed));
  });

  test('a claim for a pool that does not exist waits with PoolNotReady and binds once the pool appears', async () => {
    await objects.create(claimKind, claimObject('early', ns, { pool: 'later' }));
    await waitFor('PoolNotReady', async () => readyCondition(await objects.get(claimKind, 'early', ns))?.reason === 'PoolNotReady', {
      timeoutMs: timeouts.claimBound,
    });
    await objects.create(kinds.pool, poolObject('later', { addresses: ['10.6.0.10'], prefix: 24 }, ns));
    expect(addressOf(await boundAddress('early'))).toBe('10.6.0.10');
  });
});

describe('deletion', () => {
  test('deleting a claim deletes its IPAddress and frees the address for the next claim', async () => {
    await objects.create(kinds.pool, poolObject('del', { addresses: ['10.7.0.10-10.7.0.20'], prefix: 24 }, ns));
    await objects.create(claimKind, claimObject('del-1', ns, { pool: 'del' }));
    expect(addressOf(await boundAddress('del-1'))).toBe('10.7.0.10');
    await objects.delete(claimKind, 'del-1', ns);
    await waitFor(
      'claim and IPAddress gone',
      async () => (await objects.get(claimKind, 'del-1', ns)) === undefined && (await objects.get(addressKind, 'del-1', ns)) === undefined,
      {
        timeoutMs: timeouts.claimBound,
      },
    );
    await objects.create(claimKind, claimObject('del-2', ns, { pool: 'del' }));
    expect(addressOf(await boundAddress('del-2'))).toBe('10.7.0.10');
  });

  test('with addressReuseGracePeriodSeconds a released address is not handed out until the period ends', async () => {
    await objects.create(
      kinds.pool,
      poolObject('grace', { addresses: ['10.8.0.10-10.8.0.11'], prefix: 24, addressReuseGracePeriodSeconds: 4 }, ns),
    );
    await objects.create(claimKind, claimObject('grace-1', ns, { pool: 'grace' }));
    expect(addressOf(await boundAddress('grace-1'))).toBe('10.8.0.10');
    await objects.delete(claimKind, 'grace-1', ns);
    await waitFor('grace-1 gone', async () => (await objects.get(claimKind, 'grace-1', ns)) === undefined, {
      timeoutMs: timeouts.claimBound,
    });
    await objects.create(claimKind, claimObject('grace-2', ns, { pool: 'grace' }));
    expect(addressOf(await boundAddress('grace-2'))).toBe('10.8.0.11');
    await objects.create(claimKind, claimObject('grace-3', ns, { pool: 'grace' }));
    await waitFor(
      'grace-3 exhausted while 10.8.0.10 is held',
      async () => readyCondition(await objects.get(claimKind, 'grace-3', ns))?.reason === 'PoolExhausted',
      {
        timeoutMs: timeouts.claimBound,
      },
    );
    expect(addressOf(await boundAddress('grace-3'))).toBe('10.8.0.10');
  });

  test('a pool keeps its finalizer while addresses are allocated, even when the delete check is skipped', async () => {
    const annotations = { 'ipam.metal.x-k8s.io/skip-validate-delete-webhook': '' };
    await objects.create(kinds.pool, {
      ...poolObject('going', { addresses: ['10.12.0.10'], prefix: 24 }, ns),
      metadata: { name: 'going', namespace: ns, annotations },
    });
    await objects.create(claimKind, claimObject('going-1', ns, { pool: 'going' }));
    await boundAddress('going-1');
    await objects.delete(kinds.pool, 'going', ns);
    // The controller saw the deletion: the pool's Ready says Deleting (a pool gone already fails below).
    await waitFor(
      'the pool to say Deleting',
      async () => {
        const p = await objects.get(kinds.pool, 'going', ns);
        return p === undefined || readyCondition(p)?.reason === 'Deleting';
      },
      { timeoutMs: timeouts.claimBound },
    );
    // And the pass that wrote it is over: one pool's reconciles run one at a time, and a claim
    // created now is decided by a later one (it waits: the pool allocates nothing while deleting).
    await objects.create(claimKind, claimObject('going-sentinel', ns, { pool: 'going' }));
    await waitFor('the sentinel claim decided', async () => readyCondition(await objects.get(claimKind, 'going-sentinel', ns)), {
      timeoutMs: timeouts.claimBound,
    });
    const terminating = await objects.get(kinds.pool, 'going', ns);
    expect(terminating?.metadata.deletionTimestamp).toBeDefined();
    expect(terminating?.metadata.finalizers).toContain('ipam.metal.x-k8s.io/protect-pool');
    await objects.delete(claimKind, 'going-sentinel', ns);
    await objects.delete(claimKind, 'going-1', ns);
    await waitFor(
      'the pool gone once its last address is released',
      async () => (await objects.get(kinds.pool, 'going', ns)) === undefined,
      {
        timeoutMs: timeouts.claimBound,
      },
    );
  });

  test('an IPAddress deleted while its claim exists stays Terminating and its address is not reused', async () => {
    await objects.create(kinds.pool, poolObject('keep', { addresses: ['10.9.0.10-10.9.0.11'], prefix: 24 }, ns));
    await objects.create(claimKind, claimObject('keep-1', ns, { pool: 'keep' }));
    await boundAddress('keep-1');
    await objects.delete(addressKind, 'keep-1', ns);
    await objects.create(claimKind, claimObject('keep-2', ns, { pool: 'keep' }));
    expect(addressOf(await boundAddress('keep-2'))).toBe('10.9.0.11');
    const terminating = await objects.get(addressKind, 'keep-1', ns);
    expect(terminating?.metadata.deletionTimestamp).toBeDefined();
    expect(terminating?.spec.address).toBe('10.9.0.10');
  });
  test("a deleting claim keeps its address while another controller's finalizer is on it; its removal releases it", async () => {
    await objects.create(kinds.pool, poolObject('held-by-other', { addresses: ['10.12.0.10'], prefix: 24 }, ns));
    await objects.create(claimKind, {
      ...claimObject('other-1', ns, { pool: 'held-by-other' }),
      metadata: { name: 'other-1', namespace: ns, finalizers: ['example.com/still-using'] },
    });
    expect(addressOf(await boundAddress('other-1'))).toBe('10.12.0.10');
    await objects.delete(claimKind, 'other-1', ns);
    // A second claim on the one-address pool: the provider decided it (PoolExhausted) after it
    // saw the deletion, and the deleting claim still has its IPAddress.
    await objects.create(claimKind, claimObject('other-2', ns, { pool: 'held-by-other' }));
    await waitFor(
      'other-2 PoolExhausted',
      async () => readyCondition(await objects.get(claimKind, 'other-2', ns))?.reason === 'PoolExhausted',
      {
        timeoutMs: timeouts.claimBound,
      },
    );
    const deleting = await objects.get(claimKind, 'other-1', ns);
    expect(deleting?.metadata.deletionTimestamp).toBeDefined();
    expect(deleting?.metadata.finalizers).toContain('ipam.metal.x-k8s.io/release-address');
    expect((await objects.get(addressKind, 'other-1', ns))?.spec.address).toBe('10.12.0.10');

    await objects.patch(claimKind, 'other-1', ns, { metadata: { finalizers: ['ipam.metal.x-k8s.io/release-address'] } });
    await waitFor('other-1 gone', async () => (await objects.get(claimKind, 'other-1', ns)) === undefined, {
      timeoutMs: timeouts.claimBound,
    });
    expect(addressOf(await boundAddress('other-2'))).toBe('10.12.0.10');
  });
});

describe('pause and cluster linkage', () => {
  const clusterKind = kinds.cluster();

  test('a claim of a paused Cluster waits, and is allocated when the Cluster is unpaused', async () => {
    await objects.create(kinds.pool, poolObject('pause', { addresses: ['10.10.0.10-10.10.0.20'], prefix: 24 }, ns));
    await objects.create(clusterKind, { metadata: { name: 'paused', namespace: ns }, spec: { paused: true } });
    await objects.create(claimKind, claimObject('paused-1', ns, { pool: 'pause', clusterName: 'paused' }));
    await expectUnallocated(
      site(),
      await sentinelBound(site(), { pool: 'pause', name: 'paused-sentinel', linkCluster: 'clusterName' }),
      'paused-1',
    );
    await objects.patch(clusterKind, 'paused', ns, { spec: { paused: false } });
    await boundAddress('paused-1');
  });

  test('a claim naming a Cluster that does not exist waits until the Cluster is created', async () => {
    await objects.create(claimKind, claimObject('nocluster-1', ns, { pool: 'pause', clusterName: 'absent' }));
    await expectUnallocated(
      site(),
      await sentinelBound(site(), { pool: 'pause', name: 'nocluster-sentinel', linkCluster: 'clusterName' }),
      'nocluster-1',
    );
    await objects.create(clusterKind, { metadata: { name: 'absent', namespace: ns }, spec: { paused: false } });
    await boundAddress('nocluster-1');
  });

  test('the cluster-name label links a claim to its Cluster too (pre-1.8 claims)', async () => {
    await objects.create(clusterKind, {
      metadata: { name: 'labelled', namespace: ns, annotations: { 'cluster.x-k8s.io/paused': '' } },
      spec: { paused: false },
    });
    await objects.create(claimKind, claimObject('label-1', ns, { pool: 'pause', labels: { 'cluster.x-k8s.io/cluster-name': 'labelled' } }));
    await expectUnallocated(
      site(),
      await sentinelBound(site(), { pool: 'pause', name: 'label-sentinel', linkCluster: 'label' }),
      'label-1',
    );
    await objects.patch(clusterKind, 'labelled', ns, { metadata: { annotations: { 'cluster.x-k8s.io/paused': null } } });
    await boundAddress('label-1');
  });

  test('a paused pool holds allocation; removing the annotation resumes', async () => {
    await objects.create(kinds.pool, {
      ...poolObject('held', { addresses: ['10.11.0.10'], prefix: 24 }, ns),
      metadata: { name: 'held', namespace: ns, annotations: { 'cluster.x-k8s.io/paused': '' } },
    });
    await objects.create(claimKind, claimObject('held-1', ns, { pool: 'held' }));
    await waitFor('pool Ready=False Paused', async () => readyCondition(await objects.get(kinds.pool, 'held', ns))?.reason === 'Paused', {
      timeoutMs: timeouts.claimBound,
    });
    expect(await objects.get(addressKind, 'held-1', ns)).toBeUndefined();
    await objects.patch(kinds.pool, 'held', ns, { metadata: { annotations: { 'cluster.x-k8s.io/paused': null } } });
    await boundAddress('held-1');
  });

  test('deleting a claim whose Cluster is gone still releases it', async () => {
    await objects.create(clusterKind, { metadata: { name: 'doomed', namespace: ns }, spec: { paused: false } });
    await objects.create(claimKind, claimObject('doomed-1', ns, { pool: 'pause', clusterName: 'doomed' }));
    await boundAddress('doomed-1');
    await objects.delete(clusterKind, 'doomed', ns);
    await waitFor('cluster gone', async () => (await objects.get(clusterKind, 'doomed', ns)) === undefined, {
      timeoutMs: timeouts.claimBound,
    });
    await objects.delete(claimKind, 'doomed-1', ns);
    await waitFor(
      'claim and IPAddress gone',
      async () =>
        (await objects.get(claimKind, 'doomed-1', ns)) === undefined && (await objects.get(addressKind, 'doomed-1', ns)) === undefined,
      {
        timeoutMs: timeouts.claimBound,
      },
    );
  });

  test('a deleting claim of a former Cluster is released although a new paused Cluster of that name exists', async () => {
    await objects.create(kinds.pool, poolObject('again', { addresses: ['10.13.0.10'], prefix: 24 }, ns));
    const former = await objects.create(clusterKind, { metadata: { name: 'again', namespace: ns }, spec: { paused: false } });
    await objects.create(claimKind, {
      ...claimObject('again-endpoint', ns, { pool: 'again', clusterName: 'again' }),
      metadata: {
        name: 'again-endpoint',
        namespace: ns,
        ownerReferences: [
          {
            apiVersion: `${clusterKind.group}/${clusterKind.version}`,
            kind: 'Cluster',
            name: 'again',
            uid: former.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
    });
    await boundAddress('again-endpoint');
    // The claim paused itself, so its release waits until the new Cluster exists (as when the
    // provider is slow or down while the Cluster is deleted and created again).
    await objects.patch(claimKind, 'again-endpoint', ns, { metadata: { annotations: { 'cluster.x-k8s.io/paused': '' } } });
    await objects.delete(clusterKind, 'again', ns);
    await waitFor(
      'the garbage collector deleting the claim of the former Cluster',
      async () => (await objects.get(claimKind, 'again-endpoint', ns))?.metadata.deletionTimestamp !== undefined,
      { timeoutMs: timeouts.claimBound },
    );
    const created = await objects.create(clusterKind, { metadata: { name: 'again', namespace: ns }, spec: { paused: true } });
    expect(created.metadata.uid).not.toBe(former.metadata.uid);
    await objects.patch(claimKind, 'again-endpoint', ns, { metadata: { annotations: { 'cluster.x-k8s.io/paused': null } } });
    await waitFor(
      "the former Cluster's claim and IPAddress gone",
      async () =>
        (await objects.get(claimKind, 'again-endpoint', ns)) === undefined &&
        (await objects.get(addressKind, 'again-endpoint', ns)) === undefined,
      { timeoutMs: timeouts.claimBound },
    );
    // The new Cluster's own claim is still held by its pause (the contract, for the real owner).
    await objects.create(claimKind, claimObject('again-new', ns, { pool: 'again', clusterName: 'again' }));
    await expectUnallocated(
      site(),
      await sentinelBound(site(), { pool: 'again', name: 'again-sentinel', linkCluster: 'clusterName' }),
      'again-new',
    );
  });
});
