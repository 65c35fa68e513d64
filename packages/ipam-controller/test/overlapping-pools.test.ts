import { describe, expect, test } from '@jest/globals';
import { InClusterIPPoolType } from '@metal-l2/api';
import { KubeClient } from '@metal-l2/kube';
import { claimObject, kinds, poolObject, readyCondition } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { boundAddress } from './support/claims.js';
import { allocationsOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { runController } from './support/running-controller.js';

// Two overlapping pools that both got past admission (created at the same moment, each checked
// against a cache without the other; here without a webhook at all): the controller sees the
// overlap itself. The older pool serves; the younger says why it does not and hands out nothing.
const space = useIpamNamespace('ipam-overlap');
const { kc, objects } = space;

describe('overlapping pools', () => {
  test('the older pool wins; the younger goes Ready=False OverlappingPool and allocates nothing', async () => {
    const elder = await objects.create(kinds.pool, poolObject('elder', { addresses: ['10.83.0.10-10.83.0.20'], prefix: 24 }, space.ns));
    // creationTimestamp has one-second resolution: create the second pool only once the clock has
    // passed the elder's second, so it is unambiguously younger.
    const elderSecond = Date.parse(String((elder.metadata as { creationTimestamp?: string }).creationTimestamp));
    await waitFor("the clock to pass the elder pool's creation second", () => Date.now() >= elderSecond + 1_000, {
      timeoutMs: 5_000,
      intervalMs: 50,
    });
    await objects.create(kinds.pool, poolObject('junior', { addresses: ['10.83.0.15-10.83.0.30'], prefix: 24 }, space.ns));
    await objects.create(kinds.claim(), claimObject('junior-1', space.ns, { pool: 'junior' }));
    await objects.create(kinds.claim(), claimObject('elder-1', space.ns, { pool: 'elder' }));
    // The younger pool handed out 10.83.0.15 before anyone saw the overlap: the older pool must
    // not hand it out again.
    await objects.create(kinds.claim(), claimObject('junior-0', space.ns, { pool: 'junior' }));
    const client = KubeClient.fromKubeConfig(kc);
    try {
      await client.patchStatus(
        InClusterIPPoolType,
        { namespace: space.ns, name: 'junior' },
        { status: { allocations: { '10.83.0.15': 'junior-0' } } },
      );
    } finally {
      client.close();
    }
    await objects.create(kinds.claim(), claimObject('elder-2', space.ns, { pool: 'elder' }));
    for (let i = 3; i <= 7; i++) await objects.create(kinds.claim(), claimObject(`elder-${i}`, space.ns, { pool: 'elder' }));
    const controller = await runController(kc, space.ns);
    try {
      const junior = await waitFor(
        'junior Ready=False',
        async () => {
          const pool = await objects.get(kinds.pool, 'junior', space.ns);
          return readyCondition(pool)?.status === 'False' ? pool : undefined;
        },
        { timeoutMs: timeouts.claimBound },
      );
      expect(readyCondition(junior)).toMatchObject({
        reason: 'OverlappingPool',
        message: expect.stringContaining(`InClusterIPPool ${space.ns}/elder`),
      });
      const elder = await Promise.all(
        [1, 2, 3, 4, 5, 6, 7].map(async (i) => (await boundAddress(space.site, `elder-${i}`)).spec.address as string),
      );
      expect(elder.sort()).toEqual(['10.83.0.10', '10.83.0.11', '10.83.0.12', '10.83.0.13', '10.83.0.14', '10.83.0.16', '10.83.0.17']);
      expect(readyCondition(await objects.get(kinds.pool, 'elder', space.ns))).toMatchObject({ status: 'True' });
      // The younger pool decided its claim (every claim was cached before the controller started,
      // and one pass decides them all): it hands out nothing, and says why.
      const decided = await waitFor(
        'junior-1 decided',
        async () => {
          const claim = await objects.get(kinds.claim(), 'junior-1', space.ns);
          return readyCondition(claim) === undefined ? undefined : claim;
        },
        { timeoutMs: timeouts.claimBound },
      );
      expect(readyCondition(decided)).toMatchObject({ status: 'False', reason: 'PoolNotReady' });
      expect(decided.status?.addressRef).toBeUndefined();
      const after = await objects.get(kinds.pool, 'junior', space.ns);
      expect(after?.status?.observedGeneration).toBe(after?.metadata.generation);
      // Written the way a pool before blocks held it, then moved into its blocks: still held.
      expect(Object.keys(await allocationsOf(objects, after))).toEqual(['10.83.0.15']);
      expect(await objects.get(kinds.address(), 'junior-1', space.ns)).toBeUndefined();
    } finally {
      await controller.stop();
    }
  });
});
