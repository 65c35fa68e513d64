import { describe, expect, test } from '@jest/globals';
import { IpamLabels } from '@metal-l2/api';
import { createRuntimeMetrics } from '@metal-l2/kube';
import { claimObject, kinds, poolObject, readyCondition, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { blockIndexOf, blockName } from '../src/block/block-layout.js';
import { boundAddress } from './support/claims.js';
import { allocationsOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { withHeldWatch } from './support/lagging-watch.js';
import { runController } from './support/running-controller.js';

// A replica (or a new leader) whose claims watch lags: its cache misses claims another writer has
// bound. Status is read fresh, so it sees their allocations; it must not take a missing claim for a
// deleted one (DESIGN §3.1: "a stale cache must never decide that a claim is gone").
const space = useIpamNamespace('ipam-stale-cache');
const { kc, objects } = space;

describe('a claims cache that lags', () => {
  test('a replica that has not seen a bound claim keeps its allocation and IPAddress, and releases them once the claim is really gone', async () => {
    const lagging = await runController(kc, space.ns, { cacheClient: withHeldWatch('ipaddressclaims') });
    try {
      await objects.create(kinds.pool, poolObject('lag', { addresses: ['10.82.0.0/24'], prefix: 24 }, space.ns));
      await waitFor(
        'the pool reconciled',
        async () => (await objects.get(kinds.pool, 'lag', space.ns))?.status?.ipAddresses !== undefined,
        {
          timeoutMs: timeouts.claimBound,
        },
      );
      // Another writer binds the claim while the lagging replica runs: it sees the pool's status
      // change, but not the claim.
      const current = await runController(kc, space.ns);
      let address: Obj;
      try {
        await objects.create(kinds.claim(), claimObject('lag-1', space.ns, { pool: 'lag' }));
        address = await boundAddress(space.site, 'lag-1');
      } finally {
        await current.stop();
      }
      // Wake the lagging replica once more, now that it is the only writer, with a spec change it
      // must acknowledge (a new generation; the excluded address is not lag-1's). Once status
      // says it observed that generation, the replica has committed a whole pass over the pool
      // without lag-1 in its cache: the pass that would have released lag-1 had it taken the
      // missing claim for a deleted one.
      const ip = address.spec.address as string;
      const poked = await objects.patch(kinds.pool, 'lag', space.ns, { spec: { excludedAddresses: ['10.82.0.254'] } });
      expect(ip).not.toBe('10.82.0.254');
      const pool = await waitFor(
        'the lagging replica to observe the new generation',
        async () => {
          const p = await objects.get(kinds.pool, 'lag', space.ns);
          return p?.status?.observedGeneration === poked.metadata.generation ? p : undefined;
        },
        { timeoutMs: timeouts.claimBound },
      );
      expect((await allocationsOf(objects, pool))[ip]).toBe('lag-1');
      const now = await objects.get(kinds.address(), 'lag-1', space.ns);
      expect(now?.metadata.uid).toBe(address.metadata.uid);
      expect(now?.metadata.deletionTimestamp).toBeUndefined();
      // Once the claim is really gone (its finalizer removed by hand, then deleted), the same
      // replica, which never saw it, releases the address and removes the IPAddress.
      await objects.patch(kinds.claim(), 'lag-1', space.ns, { metadata: { finalizers: [] } });
      await objects.delete(kinds.claim(), 'lag-1', space.ns);
      await objects.patch(kinds.pool, 'lag', space.ns, { metadata: { annotations: { 'test.metal-l2/poke': '2' } } });
      await waitFor(
        `${ip} released and IPAddress lag-1 gone`,
        async () => {
          const pool = await objects.get(kinds.pool, 'lag', space.ns);
          const allocations = await allocationsOf(objects, pool);
          return allocations[ip] === undefined && (await objects.get(kinds.address(), 'lag-1', space.ns)) === undefined;
        },
        { timeoutMs: timeouts.claimBound },
      );
    } finally {
      await lagging.stop();
    }
  });

  test('a replica whose blocks cache never sees another writer’s blocks still hands out no address twice: its block writes lose the race and it decides again', async () => {
    const lagging = await runController(kc, space.ns, { cacheClient: withHeldWatch('ipaddressblocks'), blockSize: 16 });
    try {
      await objects.create(kinds.pool, poolObject('blind', { addresses: ['10.86.0.0/24'], prefix: 24 }, space.ns));
      await waitFor(
        'the pool’s layout recorded',
        async () => (await objects.get(kinds.pool, 'blind', space.ns))?.status?.blocks !== undefined,
        {
          timeoutMs: timeouts.claimBound,
        },
      );
      // Another writer binds 20 claims (two blocks) while the lagging replica runs: the replica's
      // blocks cache stays empty, whatever either of them writes.
      const current = await runController(kc, space.ns, { blockSize: 16 });
      const before = new Map<string, string>();
      try {
        for (let i = 0; i < 20; i++) await objects.create(kinds.claim(), claimObject(`blind-${i}`, space.ns, { pool: 'blind' }));
        for (let i = 0; i < 20; i++) before.set(`blind-${i}`, (await boundAddress(space.site, `blind-${i}`)).spec.address as string);
      } finally {
        await current.stop();
      }
      expect(new Set(before.values()).size).toBe(20);
      // Now the lagging replica alone: it believes the pool empty, so it tries the lowest
      // addresses, which the blocks hold; its guarded block writes fail and it reads them live.
      for (let i = 0; i < 5; i++) await objects.create(kinds.claim(), claimObject(`late-${i}`, space.ns, { pool: 'blind' }));
      const late = new Map<string, string>();
      for (let i = 0; i < 5; i++) late.set(`late-${i}`, (await boundAddress(space.site, `late-${i}`)).spec.address as string);
      const all = [...before.values(), ...late.values()];
      expect(new Set(all).size).toBe(25);
      for (const [name, address] of before) expect((await objects.get(kinds.address(), name, space.ns))?.spec.address).toBe(address);
      const allocations = await allocationsOf(objects, await objects.get(kinds.pool, 'blind', space.ns));
      expect(Object.keys(allocations)).toHaveLength(25);
      expect(new Set(Object.values(allocations)).size).toBe(25);
    } finally {
      await lagging.stop();
    }
  });
  test('a pass that writes one block and loses the race on another counts the allocations of the block it wrote', async () => {
    const metrics = createRuntimeMetrics();
    const blind = await runController(kc, space.ns, { cacheClient: withHeldWatch('ipaddressblocks'), blockSize: 2, metrics });
    try {
      // Three addresses in two blocks of two (.0-.1 and .2-.3), all excluded: the claims wait
      // together, and the exclusions lifted hand all three out in one pass.
      const addresses = ['10.89.0.1', '10.89.0.2', '10.89.0.3'];
      await objects.create(kinds.pool, poolObject('split', { addresses, prefix: 24, excludedAddresses: addresses }, space.ns));
      const pool = await waitFor(
        'the pool’s layout recorded',
        async () => {
          const p = await objects.get(kinds.pool, 'split', space.ns);
          return p?.status?.blocks !== undefined ? p : undefined;
        },
        { timeoutMs: timeouts.claimBound },
      );
      for (let i = 0; i < 3; i++) await objects.create(kinds.claim(), claimObject(`split-${i}`, space.ns, { pool: 'split' }));
      for (let i = 0; i < 3; i++) {
        await waitFor(
          `split-${i} waiting with PoolExhausted`,
          async () => readyCondition(await objects.get(kinds.claim(), `split-${i}`, space.ns))?.reason === 'PoolExhausted',
          { timeoutMs: timeouts.claimBound },
        );
      }
      // Another writer has just created the second block (its status not written yet); the blind
      // replica's cache never shows it, so its create of that block is refused.
      const uid = pool.metadata.uid ?? '';
      const namespace = (pool.status?.blocks as { namespace: string }).namespace;
      await objects.create(kinds.block, {
        apiVersion: `${kinds.block.group}/${kinds.block.version}`,
        kind: 'IPAddressBlock',
        metadata: {
          name: blockName(uid, blockIndexOf(0x0a590002n, 2)),
          namespace,
          labels: { [IpamLabels.poolUid]: uid },
          ownerReferences: [
            { apiVersion: `${kinds.pool.group}/${kinds.pool.version}`, kind: 'InClusterIPPool', name: 'split', uid, controller: true },
          ],
        },
        spec: { poolRef: { kind: 'InClusterIPPool', name: 'split', uid }, cidr: '10.89.0.2/31' },
      });
      await objects.patch(kinds.pool, 'split', space.ns, { spec: { excludedAddresses: [] } });
      const bound = new Set<string>();
      for (let i = 0; i < 3; i++) bound.add((await boundAddress(space.site, `split-${i}`)).spec.address as string);
      expect([...bound].sort()).toEqual(addresses);
      const counter = async (name: string): Promise<number> =>
        (await metrics.registry.getSingleMetricAsString(name))
          .split('\n')
          .filter((l) => l.startsWith(`${name}{kind="InClusterIPPool"`))
          .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
      // The race happened (the refused create), and every address handed out was counted once.
      expect(await counter('metal_l2_ipam_commit_conflicts_total')).toBeGreaterThanOrEqual(1);
      expect(await counter('metal_l2_ipam_allocations_total')).toBe(3);
    } finally {
      await blind.stop();
    }
  });
});
