import { describe, expect, test } from '@jest/globals';
import { claimObject, kinds, poolObject } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { allocationsOf, blocksOf, patchPoolStatus } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { runController } from './support/running-controller.js';

// clusterctl move and backup restores do not carry status (nor, for a move, the pool's blocks): a
// pool whose allocations are lost rebuilds them, into blocks, from the IPAddress objects before it
// hands out anything new.
const space = useIpamNamespace('ipam-recovery');
const { kc, objects } = space;

describe('recovery', () => {
  test('allocations wiped from status are rebuilt from IPAddresses; new claims do not get their addresses', async () => {
    const first = await runController(kc, space.ns);
    await objects.create(kinds.pool, poolObject('moved', { addresses: ['10.60.0.10-10.60.0.30'], prefix: 24 }, space.ns));
    for (const n of ['m-1', 'm-2', 'm-3']) await objects.create(kinds.claim(), claimObject(n, space.ns, { pool: 'moved' }));
    await waitFor(
      'three allocations',
      async () => Object.keys(await allocationsOf(objects, await objects.get(kinds.pool, 'moved', space.ns))).length === 3,
      {
        timeoutMs: timeouts.claimBound,
      },
    );
    // The IPAddresses follow the status write: the rebuild reads them, so all three must exist.
    await waitFor('three IPAddresses', async () => (await objects.list(kinds.address(), space.ns)).length === 3, {
      timeoutMs: timeouts.claimBound,
    });
    await first.stop();

    // What a move leaves behind: the pool with no status at all, and none of its blocks (they are
    // not in the move hierarchy).
    for (const block of await blocksOf(objects, await objects.get(kinds.pool, 'moved', space.ns))) {
      await objects.delete(kinds.block, block.metadata.name, space.ns);
    }
    await patchPoolStatus(kc, { namespace: space.ns, name: 'moved' }, null);
    expect((await objects.get(kinds.pool, 'moved', space.ns))?.status).toBeUndefined();
    const held = (await objects.list(kinds.address(), space.ns)).map((a) => a.spec.address as string).sort();

    await objects.create(kinds.claim(), claimObject('m-4', space.ns, { pool: 'moved' }));
    const second = await runController(kc, space.ns);
    try {
      const newAddress = await waitFor(
        'm-4 bound',
        async () => (await objects.get(kinds.address(), 'm-4', space.ns))?.spec.address as string | undefined,
        {
          timeoutMs: timeouts.claimBound,
        },
      );
      expect(held).not.toContain(newAddress);
      const allocations = await waitFor(
        'four allocations',
        async () => {
          const a = await allocationsOf(objects, await objects.get(kinds.pool, 'moved', space.ns));
          return Object.keys(a).length === 4 ? a : undefined;
        },
        { timeoutMs: timeouts.claimBound },
      );
      expect(Object.keys(allocations).sort()).toEqual([...held, newAddress].sort());
    } finally {
      await second.stop();
    }
  });
});
