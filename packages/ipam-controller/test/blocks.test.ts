import { describe, expect, test } from '@jest/globals';
import { IPAddressBlockType, IpamLabels } from '@metal-l2/api';
import { encodeAllocations, parseAddress, type Allocation } from '@metal-l2/ipam-core';
import { KubeClient, createRuntimeMetrics } from '@metal-l2/kube';
import { claimObject, kinds, poolObject, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { blockIndexOf, blockName } from '../src/block/block-layout.js';
import { allocationsOf, blocksOf } from './support/allocations.js';
import { boundAddress } from './support/claims.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { runController } from './support/running-controller.js';

// A pool's allocations live in IPAddressBlocks: one per aligned sub-range, created when an
// allocation needs it, owned by the pool, each written under its own resourceVersion.
const space = useIpamNamespace('ipam-blocks');
const { kc, objects } = space;

const BLOCK_SIZE = 16;

async function poolNamed(name: string): Promise<Obj> {
  const pool = await objects.get(kinds.pool, name, space.ns);
  if (pool === undefined) throw new Error(`pool ${name} is gone`);
  return pool;
}

/**
 * Writes a block the way another writer would have (created, then its status), for the address
 * `address` of `pool`: what a second replica with a stale view of the blocks leaves behind.
 */
async function writeBlock(pool: Obj, address: string, allocations: Allocation[]): Promise<void> {
  const value = parseAddress(address)?.value ?? 0n;
  const index = blockIndexOf(value, BLOCK_SIZE);
  const uid = pool.metadata.uid ?? '';
  const name = blockName(uid, index);
  const client = KubeClient.fromKubeConfig(kc, { fieldManager: 'metal-l2-ipam-controller' });
  try {
    const existing = await client.get(IPAddressBlockType, { namespace: space.ns, name });
    if (existing === undefined) {
      await client.create(IPAddressBlockType, {
        metadata: { name, namespace: space.ns, labels: { [IpamLabels.poolUid]: uid } },
        spec: { poolRef: { kind: 'InClusterIPPool', name: pool.metadata.name, namespace: space.ns, uid }, cidr: `${address}/28` },
      });
    }
    await client.patchStatus(
      IPAddressBlockType,
      { namespace: space.ns, name },
      { status: { allocations: encodeAllocations(allocations), used: allocations.length } },
    );
  } finally {
    client.close();
  }
}

describe('IPAddressBlocks', () => {
  test('blocks are made only as allocations need them, owned by the pool; the pool records its layout and keeps counts only', async () => {
    const controller = await runController(kc, space.ns, { blockSize: BLOCK_SIZE });
    try {
      await objects.create(kinds.pool, poolObject('lazy', { addresses: ['10.84.0.0/24'], prefix: 24 }, space.ns));
      for (let i = 0; i < 20; i++) await objects.create(kinds.claim(), claimObject(`lazy-${i}`, space.ns, { pool: 'lazy' }));
      const pool = await waitFor(
        '20 allocations',
        async () => {
          const p = await poolNamed('lazy');
          return p.status?.ipAddresses?.used === 20 ? p : undefined;
        },
        { timeoutMs: timeouts.claimBound },
      );
      expect(pool.status?.blocks).toEqual({ size: BLOCK_SIZE, namespace: space.ns, count: 2 });
      expect(pool.status?.allocations).toBeUndefined();
      expect(pool.status?.ipAddresses).toEqual({ total: 254, used: 20, free: 234, outOfRange: 0 });
      // 20 addresses from .1: two of the pool's sixteen blocks, no more.
      const blocks = await blocksOf(objects, pool);
      expect(blocks.map((b) => b.spec.cidr as string).sort()).toEqual(['10.84.0.0/28', '10.84.0.16/28']);
      for (const block of blocks) {
        expect(block.metadata.ownerReferences).toEqual([
          expect.objectContaining({
            kind: 'InClusterIPPool',
            name: 'lazy',
            uid: pool.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          }),
        ]);
      }
      expect(blocks.map((b) => b.status?.used as number).sort((a, b) => a - b)).toEqual([5, 15]);
    } finally {
      await controller.stop();
    }
  });

  test('a claim held in two blocks (two writers with stale views) keeps the address its IPAddress has; the other entry is dropped and handed out again', async () => {
    const first = await runController(kc, space.ns, { blockSize: BLOCK_SIZE });
    let pool: Obj;
    try {
      await objects.create(kinds.pool, poolObject('dup', { addresses: ['10.85.0.1-10.85.0.40'], prefix: 24 }, space.ns));
      await objects.create(kinds.claim(), claimObject('dup-a', space.ns, { pool: 'dup' }));
      expect((await boundAddress(space.site, 'dup-a')).spec.address).toBe('10.85.0.1');
      pool = await poolNamed('dup');
    } finally {
      await first.stop();
    }
    // Another writer, whose view of the first block was stale, gave dup-a an address in the
    // second block too; and gave dup-b (no IPAddress yet) one in each block.
    await writeBlock(pool, '10.85.0.0', [
      { address: '10.85.0.1', claim: { name: 'dup-a' } },
      { address: '10.85.0.2', claim: { name: 'dup-b' } },
    ]);
    await writeBlock(pool, '10.85.0.16', [
      { address: '10.85.0.17', claim: { name: 'dup-a' } },
      { address: '10.85.0.18', claim: { name: 'dup-b' } },
    ]);
    await objects.create(kinds.claim(), claimObject('dup-b', space.ns, { pool: 'dup' }));

    const metrics = createRuntimeMetrics();
    const second = await runController(kc, space.ns, { blockSize: BLOCK_SIZE, metrics });
    try {
      const b = (await boundAddress(space.site, 'dup-b')).spec.address as string;
      expect(['10.85.0.2', '10.85.0.18']).toContain(b);
      const other = b === '10.85.0.2' ? '10.85.0.18' : '10.85.0.2';
      const allocations = await waitFor(
        'the second entries of dup-a and dup-b dropped',
        async () => {
          const a = await allocationsOf(objects, await poolNamed('dup'));
          return a['10.85.0.17'] === undefined && a[other] === undefined ? a : undefined;
        },
        { timeoutMs: timeouts.claimBound },
      );
      expect(allocations).toEqual({ '10.85.0.1': 'dup-a', [b]: 'dup-b' });
      expect((await objects.get(kinds.address(), 'dup-a', space.ns))?.spec.address).toBe('10.85.0.1');
      expect(await metrics.registry.getSingleMetricAsString('metal_l2_ipam_duplicate_entries_dropped_total')).toContain(
        'metal_l2_ipam_duplicate_entries_dropped_total{kind="InClusterIPPool"} 2',
      );
      // The dropped addresses are free again: the next claims get them, lowest first.
      await objects.create(kinds.claim(), claimObject('dup-c', space.ns, { pool: 'dup' }));
      const c = (await boundAddress(space.site, 'dup-c')).spec.address as string;
      expect(c).toBe(b === '10.85.0.2' ? '10.85.0.3' : '10.85.0.2');
    } finally {
      await second.stop();
    }
  });
});
