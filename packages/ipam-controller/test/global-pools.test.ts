import { beforeAll, describe, expect, test } from '@jest/globals';
import { claimObject, kinds, poolObject, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { boundAddress } from './support/claims.js';
import { runController } from './support/running-controller.js';
import { allocationsOf } from './support/allocations.js';
import { useIpamNamespace } from './support/ipam-namespace.js';

// Checklist item 17, with one controller per namespace writing the same global pool: the
// resourceVersion guard on its status is all that keeps them from handing out one address twice.
const space = useIpamNamespace('ipam-global-a', {
  // Release everything while the controllers still run, so the cluster-scoped pool can go.
  beforeTeardown: async () => {
    for (const ns of [ns1, ns2])
      for (const claim of await objects.list(kinds.claim(), ns)) await objects.delete(kinds.claim(), claim.metadata.name, ns);
    await objects.delete(kinds.globalPool, globalName);
    await waitFor('the global pool gone', async () => (await objects.get(kinds.globalPool, globalName)) === undefined, {
      timeoutMs: timeouts.claimBound,
    });
  },
});
const { kc, objects } = space;
let ns1 = '';
let ns2 = '';
let globalName = '';
const bound = (name: string, namespace: string): Promise<Obj> => boundAddress({ objects, namespace }, name);

beforeAll(async () => {
  ns1 = space.ns;
  ns2 = await space.extraNamespace('ipam-global-b');
  globalName = `global-${ns1}`;
  space.stopAfterAll(await runController(kc, ns1));
  space.stopAfterAll(await runController(kc, ns2));
});

describe('global pools', () => {
  test('claims with the same name in two namespaces get distinct addresses, each IPAddress beside its claim', async () => {
    const pool = await objects.create(kinds.globalPool, poolObject(globalName, { addresses: ['10.30.0.10-10.30.0.40'], prefix: 24 }));
    for (let i = 0; i < 10; i++) {
      await objects.create(kinds.claim(), claimObject(`c${i}`, ns1, { pool: globalName, kind: 'GlobalInClusterIPPool' }));
      await objects.create(kinds.claim(), claimObject(`c${i}`, ns2, { pool: globalName, kind: 'GlobalInClusterIPPool' }));
    }
    const addresses: Obj[] = [];
    for (let i = 0; i < 10; i++) addresses.push(await bound(`c${i}`, ns1), await bound(`c${i}`, ns2));
    expect(new Set(addresses.map((a) => a.spec.address as string)).size).toBe(20);
    expect(addresses[0]?.metadata.ownerReferences).toContainEqual(
      expect.objectContaining({ kind: 'GlobalInClusterIPPool', name: globalName, uid: pool.metadata.uid, controller: false }),
    );
    const allocations = await waitFor(
      '20 allocations in the pool’s blocks',
      async () => {
        const a = await allocationsOf(objects, await objects.get(kinds.globalPool, globalName));
        return Object.keys(a).length === 20 ? a : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    expect(Object.values(allocations)).toContain(`${ns2}/c3`);
  });

  test('namespaced pools with the same name in two namespaces allocate independently', async () => {
    for (const ns of [ns1, ns2]) {
      await objects.create(kinds.pool, poolObject('same', { addresses: ['10.31.0.10-10.31.0.20'], prefix: 24 }, ns));
      await objects.create(kinds.claim(), claimObject('same-1', ns, { pool: 'same' }));
    }
    expect((await bound('same-1', ns1)).spec.address).toBe('10.31.0.10');
    expect((await bound('same-1', ns2)).spec.address).toBe('10.31.0.10');
  });
});
