import { describe, expect, test } from '@jest/globals';
import { GlobalInClusterIPPoolType } from '@metal-l2/api';
import { encodeAllocations, encodedEntryBytes, formatAddress, type Allocation } from '@metal-l2/ipam-core';
import { KubeClient } from '@metal-l2/kube';
import { claimObject, kinds, poolObject, readyCondition, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { maxBlockSizeFor } from '../src/block/block-layout.js';
import { allocationsOf, blocksOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { runController } from './support/running-controller.js';

// Issue 9, then issue 21: allocations lived in the pool's status, and the API server refuses an
// object past etcd's request limit (~1.5 MiB), so a pool used a quarter of a /16 with long claim
// names and then went StatusFull. Now they live in IPAddressBlocks, each a bounded sub-range whose
// full size fits the byte budget: the budget bounds a block, and a pool holds its whole range.
const space = useIpamNamespace('ipam-budget');
const { kc, objects } = space;

/** A claim name of `length` characters ending in `-<n>`, as long generated names are. */
function longName(prefix: string, n: number, length: number): string {
  const suffix = `-${n}`;
  return `${prefix}${'x'.repeat(length - prefix.length - suffix.length)}${suffix}`;
}

async function claimsOf(prefix: string): Promise<Obj[]> {
  return (await objects.list(kinds.claim(), space.ns)).filter((c) => c.metadata.name.startsWith(prefix));
}

const isBound = (c: Obj): boolean => readyCondition(c)?.status === 'True' && c.status?.addressRef?.name !== undefined;

/** An object as the API server stores it: JSON with managedFields. */
function storedBytes(obj: Obj | undefined): number {
  return Buffer.byteLength(JSON.stringify(obj));
}

describe('allocations beyond one object', () => {
  test('253-character claims past what one object under the budget could hold all bind, across blocks that each stay under the budget; a release goes at once', async () => {
    // A 16 KiB budget: one object held about 40 such entries before blocks; 16-address blocks fit it.
    const budget = 16_384;
    const blockSize = maxBlockSizeFor(budget);
    expect(blockSize).toBe(16);
    const controller = await runController(kc, space.ns, { statusBudgetBytes: budget, blockSize });
    try {
      await objects.create(kinds.pool, poolObject('long', { addresses: ['10.214.0.0/24'], prefix: 24 }, space.ns));
      const names = Array.from({ length: 80 }, (_, i) => longName('s', i, 253));
      for (let i = 0; i < names.length; i += 20) {
        await Promise.all(names.slice(i, i + 20).map((n) => objects.create(kinds.claim(), claimObject(n, space.ns, { pool: 'long' }))));
      }
      const bound = await waitFor(
        'all 80 claims bound',
        async () => {
          const claims = (await claimsOf('s')).filter(isBound);
          return claims.length === 80 ? claims : undefined;
        },
        { timeoutMs: timeouts.burstBound },
      );
      // The counts may lag the blocks by a second (docs/ipam-provider.md): waited for, not read once.
      const pool = await waitFor(
        'pool long counting 80 used',
        async () => {
          const p = await objects.get(kinds.pool, 'long', space.ns);
          return p?.status?.ipAddresses?.used === 80 ? p : undefined;
        },
        { timeoutMs: timeouts.watchEvent },
      );
      // Far past what the pool object alone could carry under this budget.
      expect(80 * encodedEntryBytes({ address: '10.214.0.100', claim: { name: names[0] ?? '' } })).toBeGreaterThan(budget);
      expect(readyCondition(pool)).toMatchObject({ status: 'True', reason: 'PoolReady' });
      expect(pool?.status?.ipAddresses).toMatchObject({ used: 80 });
      expect(pool?.status?.allocations).toBeUndefined();
      expect(storedBytes(pool)).toBeLessThan(budget);
      const blocks = await blocksOf(objects, pool);
      // 80 addresses from .1 (the network address is not handed out): blocks .0/28 to .80/28.
      expect(blocks.map((b) => b.spec.cidr as string).sort()).toEqual(Array.from({ length: 6 }, (_, i) => `10.214.0.${i * 16}/28`).sort());
      for (const block of blocks) expect(storedBytes(block)).toBeLessThanOrEqual(budget);
      const allocations = await allocationsOf(objects, pool);
      expect(new Set(Object.keys(allocations)).size).toBe(80);
      expect(new Set(bound.map((c) => c.metadata.name))).toEqual(new Set(Object.values(allocations)));

      const leaving = names[3] ?? '';
      await objects.delete(kinds.claim(), leaving, space.ns);
      await waitFor(
        `claim ${leaving} released and gone`,
        async () => {
          const gone = (await objects.get(kinds.claim(), leaving, space.ns)) === undefined;
          const held = Object.values(await allocationsOf(objects, await objects.get(kinds.pool, 'long', space.ns)));
          return gone && !held.includes(leaving) && held.length === 79;
        },
        { timeoutMs: timeouts.claimBound },
      );
    } finally {
      await controller.stop();
    }
  });

  test('a pool written before blocks, its object at the API server’s limit, moves into blocks: nothing is lost, late claims bind, a release goes at once', async () => {
    // What issue 9 saw: a /16 pool whose status, with 240-character names, reached the API
    // server's limit. Built directly the way the controller before blocks wrote it (claims of a
    // namespace this controller does not watch, so it keeps them), then one of our claims.
    const poolName = `budget-wall-${space.ns}`;
    await objects.create(kinds.globalPool, poolObject(poolName, { addresses: ['10.213.0.0/16'], prefix: 16 }));
    const entries: Allocation[] = [{ address: '10.213.0.1', claim: { namespace: space.ns, name: 'keeper' } }];
    for (let i = 0, bytes = 0; bytes < 1_545_000; i++) {
      const entry = {
        address: formatAddress({ family: 4, value: 0x0ad50100n + BigInt(i) }),
        claim: { namespace: 'elsewhere', name: longName('w', i, 240) },
      };
      entries.push(entry);
      bytes += encodedEntryBytes(entry);
    }
    const prefill = KubeClient.fromKubeConfig(kc, { fieldManager: 'metal-l2-test-prefill' });
    await prefill.patchStatus(GlobalInClusterIPPoolType, { name: poolName }, { status: { allocations: encodeAllocations(entries) } });
    prefill.close();
    await objects.create(kinds.claim(), claimObject('keeper', space.ns, { pool: poolName, kind: 'GlobalInClusterIPPool' }));

    const controller = await runController(kc, space.ns);
    try {
      const names = Array.from({ length: 40 }, (_, i) => longName('late', i, 240));
      for (let i = 0; i < names.length; i += 20) {
        await Promise.all(
          names
            .slice(i, i + 20)
            .map((n) => objects.create(kinds.claim(), claimObject(n, space.ns, { pool: poolName, kind: 'GlobalInClusterIPPool' }))),
        );
      }
      await waitFor(
        'keeper and 40 late claims bound',
        async () => ((await claimsOf('late')).filter(isBound).length === 40 ? true : undefined),
        {
          timeoutMs: timeouts.burstBound,
        },
      );
      const pool = await objects.get(kinds.globalPool, poolName);
      expect(readyCondition(pool)).toMatchObject({ status: 'True', reason: 'PoolReady' });
      expect(pool?.status?.allocations).toBeUndefined();
      const allocations = await allocationsOf(objects, pool);
      // Every entry the old layout held is where it was, with the same claim.
      for (const entry of entries) {
        expect(allocations[entry.address]).toBe(`${entry.claim.namespace ?? ''}/${entry.claim.name}`);
      }
      expect(Object.keys(allocations)).toHaveLength(entries.length + 40);
      expect((await objects.get(kinds.address(), 'keeper', space.ns))?.spec.address).toBe('10.213.0.1');

      await objects.delete(kinds.claim(), 'keeper', space.ns);
      await waitFor('keeper released and gone', async () => ((await claimsOf('keeper')).length === 0 ? true : undefined), {
        timeoutMs: timeouts.claimBound,
      });
      const after = await allocationsOf(objects, await objects.get(kinds.globalPool, poolName));
      expect(Object.values(after)).not.toContain(`${space.ns}/keeper`);
    } finally {
      await controller.stop();
      // The test namespace's deletion does not reach a cluster-scoped pool: let it go here.
      await objects.patch(kinds.globalPool, poolName, undefined, { metadata: { finalizers: null } }).catch(() => undefined);
      await objects.delete(kinds.globalPool, poolName);
    }
  });
});
