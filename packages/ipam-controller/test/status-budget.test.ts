import { describe, expect, test } from '@jest/globals';
import { GlobalInClusterIPPoolType } from '@metal-l2/api';
import { encodeAllocations, encodedEntryBytes, formatAddress, type Allocation } from '@metal-l2/ipam-core';
import { EventRecorder, KubeClient, createLogger, createRuntimeMetrics } from '@metal-l2/kube';
import { claimObject, kinds, poolObject, readyCondition, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { STATUS_RESERVE_BYTES, allocationCost } from '../src/pool/status-budget.js';
import type { RunningIpamController } from '../src/start.js';
import { useIpamNamespace } from './support/ipam-namespace.js';
import { eventsAbout } from './support/metal.js';
import { runController } from './support/running-controller.js';

// Allocations live in the pool's status, and the API server refuses a pool object past etcd's
// request limit (~1.5 MiB). Issue 9: past that wall the pool froze silently. Now the object is
// held under a byte budget, the pool and its waiting claims say so, and releases never wait.
const space = useIpamNamespace('ipam-budget');
const { kc, objects } = space;

/** A claim name of `length` characters ending in `-<n>`, as long generated names are. */
function longName(prefix: string, n: number, length: number): string {
  const suffix = `-${n}`;
  return `${prefix}${'x'.repeat(length - prefix.length - suffix.length)}${suffix}`;
}

function recorder(): EventRecorder {
  return new EventRecorder({
    client: KubeClient.fromKubeConfig(kc, { fieldManager: 'metal-l2-test-events' }),
    component: 'metal-l2-ipam-controller',
    logger: createLogger({ level: 'error', silent: true }),
  });
}

async function claimsOf(prefix: string): Promise<Obj[]> {
  return (await objects.list(kinds.claim(), space.ns)).filter((c) => c.metadata.name.startsWith(prefix));
}

const isBound = (c: Obj): boolean => readyCondition(c)?.status === 'True' && c.status?.addressRef?.name !== undefined;
const isWaitingForRoom = (c: Obj): boolean => readyCondition(c)?.reason === 'PoolStatusFull';

/** The pool object as the API server stores it: JSON with managedFields. */
function storedBytes(pool: Obj | undefined): number {
  return Buffer.byteLength(JSON.stringify(pool));
}

describe('pool status size budget', () => {
  test('past its budget a pool is Ready=False StatusFull with a Warning Event and metrics, claims wait with PoolStatusFull, and a release lets one bind', async () => {
    // The pool object as the controller leaves it before any claim: its size is the base of the budget.
    const first = await runController(kc, space.ns);
    await objects.create(kinds.pool, poolObject('small', { addresses: ['10.214.0.0/24'], prefix: 24 }, space.ns));
    const base = await waitFor(
      'pool small Ready',
      async () => {
        const pool = await objects.get(kinds.pool, 'small', space.ns);
        return readyCondition(pool)?.status === 'True' ? pool : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    await first.stop();

    // Room for three 240-character claims, and some slack for the longer Ready message once full.
    const cost = allocationCost({ address: '10.214.0.100', claim: { name: longName('s', 0, 240) } }, { reservesReleaseMark: false });
    const budget = storedBytes(base) + STATUS_RESERVE_BYTES + 3 * cost + 400;
    const metrics = createRuntimeMetrics();
    let controller: RunningIpamController | undefined;
    try {
      controller = await runController(kc, space.ns, { statusBudgetBytes: budget, metrics, events: recorder() });
      const names = Array.from({ length: 6 }, (_, i) => longName('s', i, 240));
      for (const name of names) await objects.create(kinds.claim(), claimObject(name, space.ns, { pool: 'small' }));

      const settled = await waitFor(
        'every claim bound or waiting for room, the pool StatusFull',
        async () => {
          const claims = await claimsOf('s');
          const pool = await objects.get(kinds.pool, 'small', space.ns);
          const bound = claims.filter(isBound);
          const waiting = claims.filter(isWaitingForRoom);
          const done = bound.length + waiting.length === 6 && readyCondition(pool)?.reason === 'StatusFull';
          return done ? { bound, waiting, pool } : undefined;
        },
        { timeoutMs: timeouts.claimBound },
      );
      expect(settled.bound.length).toBeGreaterThanOrEqual(1);
      expect(settled.waiting.length).toBeGreaterThanOrEqual(2);
      expect(readyCondition(settled.waiting[0])?.message).toContain(`InClusterIPPool ${space.ns}/small has free addresses`);
      expect(readyCondition(settled.pool)).toMatchObject({ status: 'False', reason: 'StatusFull' });
      expect(readyCondition(settled.pool)?.message).toContain(`${settled.waiting.length} claims wait for room`);
      // Addresses are free: the counts do not pretend otherwise.
      expect(settled.pool?.status?.ipAddresses).toMatchObject({ used: settled.bound.length });
      expect(storedBytes(settled.pool)).toBeLessThanOrEqual(budget);

      const events = await waitFor(
        'a StatusFull Warning Event on the pool',
        async () => {
          const found = (await eventsAbout(kc, space.ns, 'small')).filter((e) => e.startsWith('StatusFull:'));
          return found.length > 0 ? found : undefined;
        },
        { timeoutMs: timeouts.watchEvent },
      );
      expect(events[0]).toContain(`${budget}-byte size budget`);

      const labels = `kind="InClusterIPPool",namespace="${space.ns}",pool="small"`;
      const text = await metrics.registry.metrics();
      expect(text).toContain(`metal_l2_ipam_claims_waiting_for_status_room{${labels}} ${settled.waiting.length}`);
      expect(text).toContain(`metal_l2_ipam_pool_object_budget_bytes ${budget}`);
      const objectBytes = Number(new RegExp(`metal_l2_ipam_pool_object_bytes\\{${labels}\\} (\\d+)`).exec(text)?.[1]);
      expect(objectBytes).toBeGreaterThan(3 * cost);
      expect(objectBytes).toBeLessThanOrEqual(budget);

      // A release frees room: it commits at once, and a waiting claim takes the room.
      const leaving = settled.bound[0]?.metadata.name ?? '';
      await objects.delete(kinds.claim(), leaving, space.ns);
      await waitFor(
        `claim ${leaving} gone and a waiting claim bound in its place`,
        async () => {
          const claims = await claimsOf('s');
          const bound = claims.filter(isBound);
          const gone = claims.every((c) => c.metadata.name !== leaving);
          const replaced = bound.some((c) => settled.waiting.some((w) => w.metadata.name === c.metadata.name));
          if (gone && replaced && bound.length === settled.bound.length) return true;
          throw new Error(`gone=${gone} bound=${bound.length} replaced=${replaced}`);
        },
        { timeoutMs: timeouts.claimBound },
      );
    } finally {
      await controller?.stop();
    }
  });

  test('a pool object at the API server’s limit: claims that do not fit wait with PoolStatusFull and a deleted bound claim is released', async () => {
    // What issue 9 saw: a /16 pool whose status, with 240-character names, reached the API
    // server's limit. Built directly (claims of a namespace this controller does not watch, so
    // it leaves them alone), then one of our claims, bound, and many more that cannot fit.
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
    await objects.create(kinds.claim(), claimObject('keeper', space.ns, { pool: poolName, kind: 'GlobalInClusterIPPool' }));

    let controller: RunningIpamController | undefined;
    try {
      controller = await runController(kc, space.ns, { events: recorder() });
      await waitFor('keeper bound', async () => claimsOf('keeper').then((c) => (c.some(isBound) ? true : undefined)), {
        timeoutMs: timeouts.claimBound,
      });

      const site = space.site;
      const names = Array.from({ length: 40 }, (_, i) => longName('late', i, 240));
      for (let i = 0; i < names.length; i += 20) {
        await Promise.all(
          names
            .slice(i, i + 20)
            .map((n) => site.objects.create(kinds.claim(), claimObject(n, space.ns, { pool: poolName, kind: 'GlobalInClusterIPPool' }))),
        );
      }
      await waitFor(
        '40 late claims waiting with PoolStatusFull',
        async () => ((await claimsOf('late')).filter(isWaitingForRoom).length === 40 ? true : undefined),
        { timeoutMs: timeouts.claimBound },
      );
      const pool = await objects.get(kinds.globalPool, poolName);
      expect(readyCondition(pool)).toMatchObject({ status: 'False', reason: 'StatusFull' });

      // Its release must not wait for allocations that cannot fit.
      await objects.delete(kinds.claim(), 'keeper', space.ns);
      await waitFor('keeper released and gone', async () => ((await claimsOf('keeper')).length === 0 ? true : undefined), {
        timeoutMs: timeouts.claimBound,
      });
      const after = await objects.get(kinds.globalPool, poolName);
      expect(Object.values((after?.status?.allocations ?? {}) as Record<string, string>)).not.toContain(`${space.ns}/keeper`);
    } finally {
      await controller?.stop();
      // The test namespace's deletion does not reach a cluster-scoped pool: let it go here.
      await objects.patch(kinds.globalPool, poolName, undefined, { metadata: { finalizers: null } }).catch(() => undefined);
      await objects.delete(kinds.globalPool, poolName);
    }
  });
});
