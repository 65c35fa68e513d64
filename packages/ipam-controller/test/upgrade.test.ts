import { beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { claimObject, kinds, poolObject, readyCondition, type Obj } from '@metal-l2/test-support/objects';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { allBound, boundAddress, createClaims, expectMidBurst, firstBound } from './support/claims.js';
import { ControllerProcess } from './support/controller-process.js';
import { allocationsOf, blocksOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { oldIpamController } from './support/old-controller.js';

// The upgrade from the layout before IPAddressBlocks (every allocation in pool.status.allocations)
// in the middle of a burst: the old controller binds part of the burst and is killed, the new one
// starts while claims keep coming. It moves the pool's allocations into blocks with nothing lost
// or moved: every claim ends bound once, each claim bound before keeps its address and IPAddress,
// and no address is held twice.
const space = useIpamNamespace('ipam-upgrade');
const { objects } = space;

/** The last release before blocks (main at e227631). */
const OLD_COMMIT = 'e227631';

let oldMain = '';

beforeAll(async () => {
  oldMain = await oldIpamController(OLD_COMMIT);
}, 300_000);

/** Claim name → [address, IPAddress UID] of every bound claim of the burst, read now. */
async function boundNow(prefix: string): Promise<Map<string, [string, string]>> {
  const mine = (o: Obj): boolean => o.metadata.name.startsWith(`${prefix}-`);
  const bound = new Set(
    (await objects.list(kinds.claim(), space.ns))
      .filter((c) => mine(c) && c.status?.addressRef?.name !== undefined)
      .map((c) => c.metadata.name),
  );
  const addresses = (await objects.list(kinds.address(), space.ns)).filter((a) => bound.has(a.metadata.name));
  return new Map(addresses.map((a) => [a.metadata.name, [a.spec.address as string, a.metadata.uid ?? '']]));
}

describe('upgrade to blocks', () => {
  test(
    'the controller before blocks is killed mid-burst and the new one takes over: every claim bound once, nothing moved, the pool’s allocations in blocks',
    async () => {
      await objects.create(kinds.pool, poolObject('upgrade', { addresses: ['10.42.0.0/23'], prefix: 23 }, space.ns));
      // The first part of the burst waits before the old controller starts: all of it is its work.
      await createClaims(space.site, { pool: 'upgrade', prefix: 'u', to: 300 });
      const old = space.stopAfterAll(ControllerProcess.start({ kubeconfig: space.kubeconfigPath, namespace: space.ns, main: oldMain }));
      await firstBound(space.site, { prefix: 'u', atLeast: 30 });
      await old.kill();
      const atKill = await expectMidBurst(space.site, { prefix: 'u', count: 300 });
      const before = await boundNow('u');
      const legacy = ((await objects.get(kinds.pool, 'upgrade', space.ns))?.status?.allocations ?? {}) as Record<string, string>;
      process.stderr.write(
        `old controller killed with ${atKill.bound} of 300 claims bound, ${Object.keys(legacy).length} allocations in pool status\n`,
      );
      // What the old layout wrote: every IPAddress it made has its allocation in pool status.
      for (const [name, [address]] of before) expect(legacy[address]).toBe(name);

      // 64-address blocks: the 512-address pool is cut into 8, the migration writes several.
      const next = space.stopAfterAll(
        ControllerProcess.start({ kubeconfig: space.kubeconfigPath, namespace: space.ns, args: ['--block-size', '64'] }),
      );
      // The burst goes on while the new controller starts and migrates.
      await createClaims(space.site, { pool: 'upgrade', prefix: 'u', from: 300, to: 400 });
      const addresses = await allBound(space.site, { prefix: 'u', count: 400 });
      expect(new Set(addresses).size).toBe(400);
      const after = await boundNow('u');
      for (const [name, was] of before) expect(after.get(name)).toEqual(was);

      const pool = await objects.get(kinds.pool, 'upgrade', space.ns);
      expect(pool?.status?.allocations).toBeUndefined();
      const blocks = await blocksOf(objects, pool);
      expect(pool?.status?.blocks).toEqual({ size: 64, namespace: space.ns, count: blocks.length });
      expect(pool?.status?.ipAddresses).toMatchObject({ used: 400 });
      const allocations = await allocationsOf(objects, pool);
      for (const [address, claim] of Object.entries(legacy)) expect(allocations[address]).toBe(claim);
      expect(Object.keys(allocations)).toHaveLength(400);
      expect(new Set(Object.values(allocations)).size).toBe(400);
      expect(blocks.length).toBeGreaterThan(1);
      await next.kill();
    },
    testTimeout(timeouts.burstBound, timeouts.burstBound),
  );
});

/** The last release before pools were stamped with the management cluster that allocates from them (main at 538cc3f). */
const PREVIOUS_COMMIT = '538cc3f';

describe('upgrade from the release before pool stamps', () => {
  test(
    'its global pool keeps working: stamped as this cluster’s, nothing held or refused, a release in its grace period still waits',
    async () => {
      const previous = await oldIpamController(PREVIOUS_COMMIT);
      const name = `prev-${space.ns}`;
      const global = (claim: string): Obj => claimObject(claim, space.ns, { pool: name, kind: 'GlobalInClusterIPPool' });
      await objects.create(
        kinds.globalPool,
        poolObject(name, { addresses: ['10.43.0.10-10.43.0.12'], prefix: 24, addressReuseGracePeriodSeconds: 600 }),
      );
      for (const claim of ['p-0', 'p-1']) await objects.create(kinds.claim(), global(claim));
      const old = space.stopAfterAll(ControllerProcess.start({ kubeconfig: space.kubeconfigPath, namespace: space.ns, main: previous }));
      const kept = await boundAddress(space.site, 'p-0');
      const released = (await boundAddress(space.site, 'p-1')).spec.address as string;
      await objects.delete(kinds.claim(), 'p-1', space.ns);
      await waitFor(
        `${released} in its grace period`,
        async () => (await allocationsOf(objects, await objects.get(kinds.globalPool, name)))[released]?.includes('@') === true,
        { timeoutMs: timeouts.claimBound },
      );
      await old.kill();
      expect((await objects.get(kinds.globalPool, name))?.metadata.annotations).toBeUndefined();

      const next = space.stopAfterAll(ControllerProcess.start({ kubeconfig: space.kubeconfigPath, namespace: space.ns }));
      await objects.create(kinds.claim(), global('p-2'));
      const fresh = (await boundAddress(space.site, 'p-2')).spec.address as string;
      expect([kept.spec.address, released]).not.toContain(fresh);
      const pool = await waitFor(
        'the pool stamped',
        async () => {
          const p = await objects.get(kinds.globalPool, name);
          return p?.metadata.annotations?.['ipam.metal.x-k8s.io/allocating-cluster'] !== undefined ? p : undefined;
        },
        { timeoutMs: timeouts.claimBound },
      );
      const uid = (await space.kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'kube-system' })).metadata?.uid;
      expect(pool.metadata.annotations?.['ipam.metal.x-k8s.io/allocating-cluster']).toBe(uid);
      expect(readyCondition(pool)).toMatchObject({ status: 'True', reason: 'PoolReady' });
      expect(pool.status?.reuseHeldUntil).toBeUndefined();
      expect((await objects.get(kinds.address(), 'p-0', space.ns))?.metadata.uid).toBe(kept.metadata.uid);
      expect((await allocationsOf(objects, pool))[released]).toMatch(new RegExp(`^${space.ns}/p-1@`));

      // The cluster-scoped pool goes while the controller runs (a deleting pool releases at once).
      for (const claim of ['p-0', 'p-2']) await objects.delete(kinds.claim(), claim, space.ns);
      await objects.delete(kinds.globalPool, name);
      await waitFor('the pool gone', async () => (await objects.get(kinds.globalPool, name)) === undefined, {
        timeoutMs: timeouts.claimBound,
      });
      await next.kill();
    },
    testTimeout(300_000, timeouts.claimBound * 6),
  );
});
