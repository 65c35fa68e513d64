import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import type { OwnedControlPlane } from '@metal-l2/local-control-plane';
import { loadKubeConfig } from '@metal-l2/test-support/cluster';
import { deleteMovedObjects, moveObjects } from '@metal-l2/test-support/clusterctl-move';
import { installCrds, projectCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects, claimObject, kinds, poolObject, readyCondition, type Kind, type Obj } from '@metal-l2/test-support/objects';
import { startPrivateControlPlane, stopPrivateControlPlane } from '@metal-l2/test-support/test-control-planes';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { allocationsOf } from './support/allocations.js';
import { boundAddress } from './support/claims.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { runController } from './support/running-controller.js';

// clusterctl move (v1.7.9) of a Cluster whose claims take addresses from a GlobalInClusterIPPool,
// between two management clusters (two real API servers, each with its own controller), replayed
// as clusterctl does it: the cluster-scoped pool is copied to the target and stays in the source,
// and so do what it owns (its blocks, and the claims' IPAddresses, which it co-owns); the claims
// and the Cluster are annotated delete-for-move, stripped of their finalizers and deleted in the
// source. Before, the source took the moved claims for vanished ones and handed their addresses
// out again, and the target allocated from the same range as the source.
// Both management clusters are control planes of this file's own: their controllers watch every
// namespace, as installed by default (the AddressesMovedOut condition is written by a controller
// that sees all of a global pool's claims).
const space = useIpamNamespace('ipam-move-global', { privateControlPlane: 'ipam-move-source' });
let kcA: k8s.KubeConfig;
let objectsA: Objects;
let plane: OwnedControlPlane | undefined;
let kcB: k8s.KubeConfig;
let objectsB: Objects;
let ns = '';
let POOL = '';
const claim = kinds.claim();
const cluster = kinds.cluster();

beforeAll(async () => {
  ({ kc: kcA, objects: objectsA, ns } = space);
  POOL = `moved-${ns}`;
  plane = await startPrivateControlPlane('ipam-move-target');
  kcB = loadKubeConfig(plane.state.kubeconfig);
  objectsB = new Objects(kcB);
  await installCrds(kcB, [...(await upstreamCrds('capiV1_14')), ...(await projectCrds())]);
  await kcB.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: ns } } });
}, 180_000);

afterAll(async () => {
  await stopPrivateControlPlane(plane);
}, 60_000);

async function kubeSystemUid(kc: k8s.KubeConfig): Promise<string> {
  return (await kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'kube-system' })).metadata?.uid ?? '';
}

const globalClaim = (name: string, clusterName: string): Obj =>
  claimObject(name, ns, { pool: POOL, kind: 'GlobalInClusterIPPool', clusterName });

/** What clusterctl's owner graph takes for the Cluster `wl`, owners first. */
const moveKinds: readonly Kind[] = [cluster, kinds.globalPool, kinds.block, claim, kinds.address()];
const ofWl = (kind: Kind, obj: Obj): boolean => {
  switch (kind.kind) {
    case 'Cluster':
      return obj.metadata.name === 'wl';
    case 'GlobalInClusterIPPool':
      return obj.metadata.name === POOL;
    case 'IPAddressBlock':
      return obj.spec?.poolRef?.name === POOL;
    case 'IPAddressClaim':
      return obj.spec?.clusterName === 'wl';
    case 'IPAddress':
      return (obj.metadata.labels ?? {})['cluster.x-k8s.io/cluster-name'] === 'wl';
    default:
      return false;
  }
};

/** The addresses live claims hold on one management cluster: claim → address. */
async function liveAddresses(objects: Objects): Promise<Map<string, string>> {
  const claims = new Set((await objects.list(claim, ns)).map((c) => c.metadata.name));
  const held = new Map<string, string>();
  for (const a of await objects.list(kinds.address(), ns)) {
    if (a.spec.poolRef.name === POOL && claims.has(a.spec.claimRef.name as string)) held.set(a.metadata.name, a.spec.address as string);
  }
  return held;
}

async function waitReadyReason(objects: Objects, name: string, reason: string): Promise<{ status?: string; message?: string }> {
  return waitFor(
    `claim ${name} Ready reason ${reason}`,
    async () => {
      const c = readyCondition(await objects.get(claim, name, ns));
      return c?.reason === reason ? c : undefined;
    },
    { timeoutMs: timeouts.claimBound },
  );
}

describe('clusterctl move of a Cluster that claims from a GlobalInClusterIPPool', () => {
  test(
    'the source keeps the moved addresses and never gives them again; the copy serves them and gives nothing new until adopted; no address is given twice',
    async () => {
      // Global pools' blocks live in the controller's namespace: this file's.
      const controllerA = await runController(kcA, undefined, { vrf: { controllerNamespace: ns } });
      const controllerB = await runController(kcB, undefined, { vrf: { controllerNamespace: ns } });
      try {
        const uidA = await kubeSystemUid(kcA);
        const uidB = await kubeSystemUid(kcB);
        await objectsA.create(kinds.globalPool, poolObject(POOL, { addresses: ['10.88.0.10-10.88.0.17'], prefix: 24 }));
        for (const name of ['wl', 'stay']) await objectsA.create(cluster, { metadata: { name, namespace: ns }, spec: { paused: false } });
        for (const name of ['wl-0', 'wl-1']) await objectsA.create(claim, globalClaim(name, 'wl'));
        await objectsA.create(claim, globalClaim('stay-0', 'stay'));
        const moved = new Map<string, string>();
        for (const name of ['wl-0', 'wl-1']) moved.set(name, (await boundAddress(space.site, name)).spec.address as string);
        await boundAddress(space.site, 'stay-0');
        const stamped = await objectsA.get(kinds.globalPool, POOL);
        expect(stamped?.metadata.annotations?.['ipam.metal.x-k8s.io/allocating-cluster']).toBe(uidA);

        // clusterctl move: pause, copy, delete in the source, unpause in the target.
        await objectsA.patch(cluster, 'wl', ns, { spec: { paused: true } });
        const copied = await moveObjects(kcA, kcB, { namespace: ns, kinds: moveKinds, secrets: [], filter: ofWl });
        expect(copied.copied).toBe(1 + 1 + 1 + 2 + 2);
        expect(await deleteMovedObjects(kcA, { namespace: ns, kinds: moveKinds, secrets: [], filter: ofWl })).toBe(1 + 2);
        await objectsB.patch(cluster, 'wl', ns, { spec: { paused: false } });

        // The source: the moved claims are gone, their IPAddresses (left by clusterctl) and
        // allocations stay, and the pool says so.
        const sourcePool = await waitFor(
          'the source pool reporting the moved addresses',
          async () => {
            const p = await objectsA.get(kinds.globalPool, POOL);
            const c = (p?.status?.conditions as { type: string; status: string }[] | undefined)?.find(
              (x) => x.type === 'AddressesMovedOut',
            );
            return c?.status === 'True' ? p : undefined;
          },
          { timeoutMs: timeouts.claimBound },
        );
        const movedOut = (sourcePool.status.conditions as { type: string; reason: string; message: string }[]).find(
          (x) => x.type === 'AddressesMovedOut',
        );
        expect(movedOut?.reason).toBe('ClaimsLeftWithoutRelease');
        expect(movedOut?.message).toContain(`2 addresses`);
        expect(movedOut?.message).toContain(`${ns}/wl-0 (${moved.get('wl-0')})`);
        expect(movedOut?.message).toContain(`kubectl delete ipaddress -n ${ns} wl-0`);
        const allocations = await allocationsOf(objectsA, sourcePool);
        for (const [name, address] of moved) expect(allocations[address]).toBe(`${ns}/${name}`);
        for (const name of moved.keys()) {
          const left = await objectsA.get(kinds.address(), name, ns);
          expect(left?.metadata.deletionTimestamp).toBeUndefined();
        }
        // Every address the source has left goes to its own claims, none of the moved ones.
        for (let i = 1; i <= 5; i++) await objectsA.create(claim, globalClaim(`stay-${i}`, 'stay'));
        for (let i = 1; i <= 5; i++) expect([...moved.values()]).not.toContain((await boundAddress(space.site, `stay-${i}`)).spec.address);
        await objectsA.create(claim, globalClaim('stay-6', 'stay'));
        await waitReadyReason(objectsA, 'stay-6', 'PoolExhausted');

        // The target: the copy serves the moved claims and hands out nothing new until adopted.
        const siteB = { objects: objectsB, namespace: ns };
        for (const [name, address] of moved) expect((await boundAddress(siteB, name)).spec.address).toBe(address);
        const copy = await waitFor(
          'the copied pool not adopted',
          async () => {
            const p = await objectsB.get(kinds.globalPool, POOL);
            return readyCondition(p)?.reason === 'CopiedFromAnotherCluster' ? p : undefined;
          },
          { timeoutMs: timeouts.claimBound },
        );
        const notAdopted = readyCondition(copy);
        expect(notAdopted?.status).toBe('False');
        expect(notAdopted?.message).toContain(`management cluster ${uidA}`);
        expect(notAdopted?.message).toContain(
          `kubectl annotate globalinclusterippool ${POOL} ipam.metal.x-k8s.io/allocating-cluster=${uidB} --overwrite`,
        );
        expect(copy.metadata.annotations?.['ipam.metal.x-k8s.io/allocating-cluster']).toBe(uidA);
        await objectsB.create(claim, globalClaim('wl-2', 'wl'));
        const waiting = await waitReadyReason(objectsB, 'wl-2', 'PoolNotReady');
        expect(waiting.message).toContain(`copied from management cluster ${uidA}`);

        // No address is held by live claims on both management clusters.
        const inA = await liveAddresses(objectsA);
        const inB = await liveAddresses(objectsB);
        expect(inA.size).toBe(6);
        expect(inB.size).toBe(2);
        expect([...inA.values()].filter((a) => [...inB.values()].includes(a))).toEqual([]);

        // The source stops allocating from the pool (its claims and the pool deleted there), then the
        // target is adopted: it allocates, and not the moved addresses.
        for (let i = 0; i <= 6; i++) await objectsA.delete(claim, `stay-${i}`, ns);
        await objectsA.delete(kinds.globalPool, POOL);
        await waitFor('the source pool gone', async () => (await objectsA.get(kinds.globalPool, POOL)) === undefined, {
          timeoutMs: timeouts.claimBound,
        });
        await objectsB.patch(kinds.globalPool, POOL, undefined, {
          metadata: { annotations: { 'ipam.metal.x-k8s.io/allocating-cluster': uidB } },
        });
        expect([...moved.values()]).not.toContain((await boundAddress(siteB, 'wl-2')).spec.address);
        await waitFor('the adopted pool Ready', async () => readyCondition(await objectsB.get(kinds.globalPool, POOL))?.status === 'True', {
          timeoutMs: timeouts.claimBound,
        });
      } finally {
        await controllerB.stop();
        await controllerA.stop();
      }
    },
    testTimeout(timeouts.claimBound * 12),
  );
});
