import { describe, expect, test } from '@jest/globals';
import { claimObject, kinds, poolObject, readyCondition, type Obj } from '@metal-l2/test-support/objects';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
import { allocationsOf, blocksOf, patchPoolStatus } from './support/allocations.js';
import { boundAddress } from './support/claims.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { runController } from './support/running-controller.js';
import type { RunningIpamController } from '../src/start.js';

// addressReuseGracePeriodSeconds keeps a released address out of reach for a while (ARP caches,
// switches). The record of that wait is the `@releasedAt` entry in the pool's IPAddressBlock,
// which no IPAddress backs any more: when that block is deleted, or the pool comes back from a
// backup (or a move) without its status, the rebuild from IPAddresses cannot see it. The address
// must still not be handed out before its grace period ends.
const space = useIpamNamespace('ipam-reuse-grace');
const { kc, objects } = space;

const GRACE_SECONDS = 10;
const claim = kinds.claim();

/** A one-address pool whose only address was released into its grace period; returns when that period ends. */
async function releasedInGrace(pool: string, address: string): Promise<{ endsAtMs: number; poolObj: Obj }> {
  await objects.create(
    kinds.pool,
    poolObject(pool, { addresses: [address], prefix: 24, addressReuseGracePeriodSeconds: GRACE_SECONDS }, space.ns),
  );
  await objects.create(claim, claimObject(`${pool}-1`, space.ns, { pool }));
  expect((await boundAddress(space.site, `${pool}-1`)).spec.address).toBe(address);
  await objects.delete(claim, `${pool}-1`, space.ns);
  const entry = await waitFor(
    `${address} released into its grace period`,
    async () => {
      const value = (await allocationsOf(objects, await objects.get(kinds.pool, pool, space.ns)))[address];
      return value?.startsWith(`${pool}-1@`) === true ? value : undefined;
    },
    { timeoutMs: timeouts.claimBound },
  );
  const releasedAtMs = Date.parse(entry.slice(entry.indexOf('@') + 1));
  const poolObj = await objects.get(kinds.pool, pool, space.ns);
  if (poolObj === undefined) throw new Error(`pool ${pool} is gone`);
  return { endsAtMs: releasedAtMs + GRACE_SECONDS * 1000, poolObj };
}

async function deleteBlocks(pool: Obj): Promise<void> {
  const blocks = await blocksOf(objects, pool);
  expect(blocks).toHaveLength(1);
  for (const block of blocks) await objects.delete(kinds.block, block.metadata.name, space.ns);
}

/**
 * The next claim waits, with a condition saying why, until the released address's grace period is
 * over (checked on this machine's clock, the controller's), and then gets it.
 */
async function expectHeldUntil(name: string, pool: string, address: string, endsAtMs: number): Promise<void> {
  // The controller has decided on the claim (it has a Ready condition): it must not be bound.
  const first = await waitFor(`${name} decided`, async () => readyCondition(await objects.get(claim, name, space.ns)), {
    timeoutMs: timeouts.claimBound,
  });
  expect({ status: first.status, reason: first.reason }).toEqual({ status: 'False', reason: 'PoolNotReady' });
  expect(first.message).toContain('addressReuseGracePeriodSeconds');
  const poolReady = readyCondition(await objects.get(kinds.pool, pool, space.ns));
  expect(poolReady).toMatchObject({ status: 'False', reason: 'AllocationRecordsLost' });
  await staysTrue(
    `${name} unbound while ${address} may still be in its grace period`,
    async () => (await objects.get(claim, name, space.ns))?.status?.addressRef?.name === undefined,
    Math.max(0, endsAtMs - Date.now() - 500),
  );
  expect((await boundAddress(space.site, name)).spec.address).toBe(address);
}

describe('the reuse grace period survives lost records', () => {
  test(
    'a deleted IPAddressBlock: its released address is not handed out before its grace period ends, and is after',
    async () => {
      const controller = await runController(kc, space.ns);
      try {
        const { endsAtMs, poolObj } = await releasedInGrace('lost-block', '10.86.0.10');
        await deleteBlocks(poolObj);
        await objects.create(claim, claimObject('lost-block-2', space.ns, { pool: 'lost-block' }));
        await expectHeldUntil('lost-block-2', 'lost-block', '10.86.0.10', endsAtMs);
      } finally {
        await controller.stop();
      }
    },
    testTimeout(timeouts.claimBound * 4, GRACE_SECONDS * 1000),
  );

  test(
    'a block deleted while no controller ran: the same, once a controller starts',
    async () => {
      let controller: RunningIpamController = await runController(kc, space.ns);
      const { endsAtMs, poolObj } = await releasedInGrace('lost-offline', '10.86.1.10');
      await controller.stop();
      await deleteBlocks(poolObj);
      await objects.create(claim, claimObject('lost-offline-2', space.ns, { pool: 'lost-offline' }));
      controller = await runController(kc, space.ns);
      try {
        await expectHeldUntil('lost-offline-2', 'lost-offline', '10.86.1.10', endsAtMs);
      } finally {
        await controller.stop();
      }
    },
    testTimeout(timeouts.claimBound * 4, GRACE_SECONDS * 1000),
  );

  test(
    'a pool restored without its status (and blocks): the same',
    async () => {
      let controller: RunningIpamController = await runController(kc, space.ns);
      const { endsAtMs, poolObj } = await releasedInGrace('restored', '10.87.0.10');
      await controller.stop();
      // What a backup restore leaves: the pool without status, none of its blocks' allocations.
      await deleteBlocks(poolObj);
      await patchPoolStatus(kc, { namespace: space.ns, name: 'restored' }, null);
      expect((await objects.get(kinds.pool, 'restored', space.ns))?.status).toBeUndefined();
      await objects.create(claim, claimObject('restored-2', space.ns, { pool: 'restored' }));
      controller = await runController(kc, space.ns);
      try {
        await expectHeldUntil('restored-2', 'restored', '10.87.0.10', endsAtMs);
      } finally {
        await controller.stop();
      }
    },
    testTimeout(timeouts.claimBound * 4, GRACE_SECONDS * 1000),
  );
});
