import { describe, expect, test } from '@jest/globals';
import { restartProcess } from '@metal-l2/local-control-plane';
import { kinds, poolObject } from '@metal-l2/test-support/objects';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { allBound, createClaims, expectMidBurst, firstBound } from './support/claims.js';
import { allocationsOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { runController } from './support/running-controller.js';

// DESIGN §5 reliability: the API server restarts under a running controller in the middle of a
// burst. Its watches break, it relists, and every claim still ends bound exactly once. On a private
// control plane, since the restart would disturb every other test file.
const space = useIpamNamespace('ipam-restart', { privateControlPlane: 'apiserver-restart' });

describe('API server restart', () => {
  test(
    'an API server restart in the middle of a burst: every claim still ends bound once',
    async () => {
      const { objects } = space;
      await objects.create(kinds.pool, poolObject('restart', { addresses: ['10.90.0.0/23'], prefix: 23 }, space.ns));
      // All 300 claims wait before the controller starts, so the whole burst is its work.
      await createClaims(space.site, { pool: 'restart', prefix: 'r', to: 300 });
      space.stopAfterAll(await runController(space.kc, space.ns));
      await firstBound(space.site, { prefix: 'r', atLeast: 10 });
      // Read the instant before the restart: some bound, some not, or the restart did not land
      // mid-burst and the test proves nothing.
      const atRestart = await expectMidBurst(space.site, { prefix: 'r', count: 300 });
      const restartBegan = Date.now();
      await restartProcess(space.plane.stateDir, 'kube-apiserver');
      process.stderr.write(
        `kube-apiserver restarted (${Date.now() - restartBegan} ms) with ${atRestart.bound} of 300 claims bound and ${atRestart.addresses} IPAddresses\n`,
      );
      const addresses = await allBound(space.site, { prefix: 'r', count: 300 });
      expect(new Set(addresses).size).toBe(300);
      const allocations = await allocationsOf(objects, await objects.get(kinds.pool, 'restart', space.ns));
      expect(Object.keys(allocations)).toHaveLength(300);
      expect(new Set(Object.values(allocations)).size).toBe(300);
      // The burst went on across the restart: IPAddresses the new API server created. Their
      // creationTimestamp (whole seconds, rounded down) is never later than the real moment, so one
      // stamped at or after the restart began was created after the old API server was stopped.
      const createdAfter = (await objects.list(kinds.address(), space.ns)).filter(
        (a) => Date.parse(String((a.metadata as { creationTimestamp?: string }).creationTimestamp)) >= restartBegan,
      ).length;
      process.stderr.write(`${createdAfter} of 300 IPAddresses were created after the restart began\n`);
      expect(createdAfter).toBeGreaterThan(0);
    },
    testTimeout(timeouts.burstBound, timeouts.burstBound),
  );
});
