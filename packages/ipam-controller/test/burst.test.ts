import { describe, expect, test } from '@jest/globals';
import { kinds, poolObject } from '@metal-l2/test-support/objects';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { allBound, createClaims, expectMidBurst, firstBound } from './support/claims.js';
import { ControllerProcess } from '@metal-l2/test-support/controller-process';
import { allocationsOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { runController } from './support/running-controller.js';

// Checklist item 16: uniqueness under load, and across a controller killed with SIGKILL mid-burst.
const space = useIpamNamespace('ipam-burst');
const { kc, objects } = space;

describe('bursts', () => {
  test(
    '500 claims created at once on one pool all bind with distinct addresses',
    async () => {
      const controller = await runController(kc, space.ns);
      try {
        await objects.create(kinds.pool, poolObject('burst', { addresses: ['10.40.0.0/22'], prefix: 22, gateway: '10.40.0.1' }, space.ns));
        const started = Date.now();
        await createClaims(space.site, { pool: 'burst', prefix: 'b', to: 500 });
        const addresses = await allBound(space.site, { prefix: 'b', count: 500 });
        const seconds = (Date.now() - started) / 1000;
        process.stderr.write(
          `500-claim burst bound in ${seconds.toFixed(1)} s (${(500 / seconds).toFixed(0)} claims/s, creation included)\n`,
        );
        expect(new Set(addresses).size).toBe(500);
        expect(addresses).not.toContain('10.40.0.1');
        const pool = await objects.get(kinds.pool, 'burst', space.ns);
        expect(Object.keys(await allocationsOf(objects, pool))).toHaveLength(500);
      } finally {
        // Before the next test: this controller would bind its claims too.
        await controller.stop();
      }
    },
    testTimeout(timeouts.burstBound),
  );

  test(
    'a controller killed with SIGKILL mid-burst and restarted ends with every claim bound once',
    async () => {
      await objects.create(kinds.pool, poolObject('crash', { addresses: ['10.41.0.0/23'], prefix: 23 }, space.ns));
      // All 300 claims wait before the controller starts, so the whole burst is its work.
      await createClaims(space.site, { pool: 'crash', prefix: 'k', to: 300 });
      const first = space.stopAfterAll(ControllerProcess.start({ kubeconfig: space.kubeconfigPath, namespace: space.ns }));
      await firstBound(space.site, { prefix: 'k', atLeast: 10 });
      await first.kill();
      // Read once the process is gone: what the restarted controller finds. Some bound and some
      // not, or the kill did not land mid-burst and the test proves nothing.
      const atKill = await expectMidBurst(space.site, { prefix: 'k', count: 300 });
      process.stderr.write(`SIGKILL landed with ${atKill.bound} of 300 claims bound and ${atKill.addresses} IPAddresses\n`);
      space.stopAfterAll(first.restarted());
      const addresses = await allBound(space.site, { prefix: 'k', count: 300 });
      expect(new Set(addresses).size).toBe(300);
      const pool = await objects.get(kinds.pool, 'crash', space.ns);
      const allocations = await allocationsOf(objects, pool);
      expect(Object.keys(allocations)).toHaveLength(300);
      expect(new Set(Object.values(allocations)).size).toBe(300);
    },
    testTimeout(timeouts.burstBound, timeouts.burstBound),
  );
});
