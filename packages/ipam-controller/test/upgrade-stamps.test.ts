import { describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { ControllerProcess } from '@metal-l2/test-support/controller-process';
import { claimObject, kinds, poolObject, readyCondition, type Obj } from '@metal-l2/test-support/objects';
import { oldReleaseMain } from '@metal-l2/test-support/old-release';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { boundAddress } from './support/claims.js';
import { allocationsOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';

// The upgrade from the release before pools were stamped with the management cluster that
// allocates from them (ipam.metal.x-k8s.io/allocating-cluster). On a control plane of its own:
// every controller watches every global pool, and one of another test file would stamp this one.
const space = useIpamNamespace('ipam-upgrade-stamps', { privateControlPlane: 'ipam-upgrade-stamps' });

/** The last release before pools were stamped with the management cluster that allocates from them (one of hack/build-old-release.js's OLD_RELEASES). */
const PREVIOUS_COMMIT = 'a1a0fec';

describe('upgrade from the release before pool stamps', () => {
  test(
    'its global pool keeps working: stamped as this cluster’s, nothing held or refused, a release in its grace period still waits',
    async () => {
      const previous = await oldReleaseMain(PREVIOUS_COMMIT, 'ipam-controller');
      const name = `prev-${space.ns}`;
      const global = (claim: string): Obj => claimObject(claim, space.ns, { pool: name, kind: 'GlobalInClusterIPPool' });
      await space.objects.create(
        kinds.globalPool,
        poolObject(name, { addresses: ['10.43.0.10-10.43.0.12'], prefix: 24, addressReuseGracePeriodSeconds: 600 }),
      );
      for (const claim of ['p-0', 'p-1']) await space.objects.create(kinds.claim(), global(claim));
      const old = space.stopAfterAll(ControllerProcess.start({ kubeconfig: space.kubeconfigPath, namespace: space.ns, main: previous }));
      const kept = await boundAddress(space.site, 'p-0');
      const released = (await boundAddress(space.site, 'p-1')).spec.address as string;
      await space.objects.delete(kinds.claim(), 'p-1', space.ns);
      await waitFor(
        `${released} in its grace period`,
        async () => (await allocationsOf(space.objects, await space.objects.get(kinds.globalPool, name)))[released]?.includes('@') === true,
        { timeoutMs: timeouts.claimBound },
      );
      await old.kill();
      expect((await space.objects.get(kinds.globalPool, name))?.metadata.annotations).toBeUndefined();

      const next = space.stopAfterAll(ControllerProcess.start({ kubeconfig: space.kubeconfigPath, namespace: space.ns }));
      await space.objects.create(kinds.claim(), global('p-2'));
      const fresh = (await boundAddress(space.site, 'p-2')).spec.address as string;
      expect([kept.spec.address, released]).not.toContain(fresh);
      const pool = await waitFor(
        'the pool stamped',
        async () => {
          const p = await space.objects.get(kinds.globalPool, name);
          return p?.metadata.annotations?.['ipam.metal.x-k8s.io/allocating-cluster'] !== undefined ? p : undefined;
        },
        { timeoutMs: timeouts.claimBound },
      );
      const uid = (await space.kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'kube-system' })).metadata?.uid;
      expect(pool.metadata.annotations?.['ipam.metal.x-k8s.io/allocating-cluster']).toBe(uid);
      expect(readyCondition(pool)).toMatchObject({ status: 'True', reason: 'PoolReady' });
      expect(pool.status?.reuseHeldUntil).toBeUndefined();
      expect((await space.objects.get(kinds.address(), 'p-0', space.ns))?.metadata.uid).toBe(kept.metadata.uid);
      expect((await allocationsOf(space.objects, pool))[released]).toMatch(new RegExp(`^${space.ns}/p-1@`));

      // The cluster-scoped pool goes while the controller runs (a deleting pool releases at once).
      for (const claim of ['p-0', 'p-2']) await space.objects.delete(kinds.claim(), claim, space.ns);
      await space.objects.delete(kinds.globalPool, name);
      await waitFor('the pool gone', async () => (await space.objects.get(kinds.globalPool, name)) === undefined, {
        timeoutMs: timeouts.claimBound,
      });
      await next.kill();
    },
    testTimeout(300_000, timeouts.claimBound * 6),
  );
});
