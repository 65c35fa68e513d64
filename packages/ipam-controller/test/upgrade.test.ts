import { beforeAll, describe, expect, test } from '@jest/globals';
import { kinds, poolObject, type Obj } from '@metal-l2/test-support/objects';
import { oldReleaseMain } from '@metal-l2/test-support/old-release';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { allBound, createClaims, expectMidBurst, firstBound } from './support/claims.js';
import { ControllerProcess } from '@metal-l2/test-support/controller-process';
import { allocationsOf, blocksOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';

// The upgrade from the layout before IPAddressBlocks (every allocation in pool.status.allocations)
// in the middle of a burst: the old controller binds part of the burst and is killed, the new one
// starts while claims keep coming. It moves the pool's allocations into blocks with nothing lost
// or moved: every claim ends bound once, each claim bound before keeps its address and IPAddress,
// and no address is held twice.
const space = useIpamNamespace('ipam-upgrade');
const { objects } = space;

/** The IPAM controller's last release before blocks (one of hack/build-old-release.js's OLD_RELEASES). */
const OLD_COMMIT = 'e227631';
let oldMain = '';

beforeAll(async () => {
  oldMain = await oldReleaseMain(OLD_COMMIT, 'ipam-controller');
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
