import { describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { kinds, poolObject } from '@metal-l2/test-support/objects';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { allBound, createClaims, expectMidBurst, firstBound } from './support/claims.js';
import { ControllerProcess, freePort } from '@metal-l2/test-support/controller-process';
import { allocationsOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';

// Several writers on one pool: with leader election off (a misconfiguration or a split brain) the
// resourceVersion guard alone keeps addresses unique; with it on, a killed leader is replaced.
// Each replica is the real binary in a process of its own, as two pods would be: they share no
// cache, no queue and no memory, only the API server.
const space = useIpamNamespace('ipam-replicas');
const { objects } = space;

describe('replicas', () => {
  test(
    'two replicas without leader election race on one pool: their writes conflict, and no address is handed out twice',
    async () => {
      const replicas: ControllerProcess[] = [];
      for (let i = 0; i < 2; i++) {
        const [metricsPort, probePort] = [await freePort(), await freePort()];
        replicas.push(
          // 64-address blocks: the claims spread over several blocks, each raced on by both replicas.
          space.stopAfterAll(
            ControllerProcess.start({
              kubeconfig: space.kubeconfigPath,
              namespace: space.ns,
              metricsPort,
              probePort,
              args: ['--block-size', '64'],
            }),
          ),
        );
      }
      try {
        // Both ready (caches synced) before the claims come, so both decide on them. A replica
        // loses a race only when the other committed the pool between its read and its write, a
        // window of milliseconds: claims keep coming, 25 a second, until at least 100 came and a
        // replica lost one (each counts its status writes refused with 409 Conflict on /metrics).
        await Promise.all(replicas.map((r) => r.ready()));
        await objects.create(kinds.pool, poolObject('shared', { addresses: ['10.80.0.0/22'], prefix: 22 }, space.ns));
        const conflictsOf = async (): Promise<number[]> =>
          Promise.all(replicas.map((r) => r.metric('metal_l2_ipam_commit_conflicts_total')));
        let claims = 0;
        await waitFor(
          'a block or pool status write lost to the other replica (409 Conflict)',
          async () => {
            if (claims >= 100 && (await conflictsOf()).some((n) => n > 0)) return true;
            if (claims >= 500) return false; // half the pool: enough chances; wait out the deadline
            await createClaims(space.site, { pool: 'shared', prefix: 'r', from: claims, to: claims + 25 });
            claims += 25;
            return false;
          },
          { timeoutMs: timeouts.burstBound, intervalMs: 1_000 },
        );
        const addresses = await allBound(space.site, { prefix: 'r', count: claims });
        expect(new Set(addresses).size).toBe(claims);
        const allocations = await allocationsOf(objects, await objects.get(kinds.pool, 'shared', space.ns));
        expect(Object.keys(allocations)).toHaveLength(claims);
        expect(new Set(Object.values(allocations)).size).toBe(claims);
        // Every allocation was committed by exactly one replica: their counts add up to the claims,
        // less the second entries a claim got in another block and lost to its IPAddress.
        const allocated = await Promise.all(replicas.map((r) => r.metric('metal_l2_ipam_allocations_total')));
        const dropped = await Promise.all(replicas.map((r) => r.metric('metal_l2_ipam_duplicate_entries_dropped_total')));
        const conflicts = await conflictsOf();
        process.stderr.write(
          `two replicas, ${claims} claims: allocations committed ${allocated.join(' + ')}, second entries dropped ${dropped.join(' + ')}, block or pool status writes refused with 409 ${conflicts.join(' + ')}\n`,
        );
        const sum = (ns: number[]): number => ns.reduce((total, n) => total + n, 0);
        expect(sum(allocated) - sum(dropped)).toBe(claims);
      } finally {
        // Before the next test: these replicas would act on its claims too.
        await Promise.all(replicas.map((r) => r.kill()));
      }
    },
    testTimeout(timeouts.claimBound, timeouts.burstBound, timeouts.burstBound),
  );

  test(
    'with leader election one replica leads; killing it mid-burst hands the lease over and the burst completes',
    async () => {
      const lease = `ipam-${space.ns}`;
      const start = (identity: string): ControllerProcess =>
        space.stopAfterAll(ControllerProcess.start({ kubeconfig: space.kubeconfigPath, namespace: space.ns, lease, identity }));
      // All claims wait before the replicas start, so the whole burst is the leaders' work.
      await objects.create(kinds.pool, poolObject('elected', { addresses: ['10.81.0.0/24'], prefix: 24 }, space.ns));
      await createClaims(space.site, { pool: 'elected', prefix: 'e', to: 200 });
      const processes = new Map<string, ControllerProcess>([
        ['replica-a', start('replica-a')],
        ['replica-b', start('replica-b')],
      ]);
      const coordination = space.kc.makeApiClient(k8s.CoordinationV1Api);
      const holderOf = async (): Promise<string | undefined> =>
        (await coordination.readNamespacedLease({ namespace: space.ns, name: lease })).spec?.holderIdentity?.split('_')[0];
      const holder = await waitFor('a leader', () => holderOf().catch(() => undefined), { timeoutMs: timeouts.claimBound });
      await firstBound(space.site, { prefix: 'e', atLeast: 10 });
      await processes.get(holder)?.kill();
      // Read once the leader is gone: some bound and some left for the next leader, or the kill
      // did not land mid-burst.
      const atKill = await expectMidBurst(space.site, { prefix: 'e', count: 200 });
      process.stderr.write(`leader ${holder} killed with ${atKill.bound} of 200 claims bound\n`);
      const next = await waitFor(
        'another leader',
        async () => {
          const identity = await holderOf();
          return identity !== undefined && identity !== holder ? identity : undefined;
        },
        { timeoutMs: 60_000 },
      );
      expect(next).not.toBe(holder);
      const addresses = await allBound(space.site, { prefix: 'e', count: 200 });
      expect(new Set(addresses).size).toBe(200);
    },
    testTimeout(timeouts.claimBound, timeouts.burstBound, 60_000, timeouts.burstBound),
  );
});
