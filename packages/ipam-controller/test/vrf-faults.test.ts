import { beforeAll, describe, expect, test } from '@jest/globals';
import type { FaultRule, FaultRuleInput, Simulator } from '@metal-l2/metal-sim';
import { claimObject, kinds } from '@metal-l2/test-support/objects';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { createCredentials, createReadyPool, loseVrfStatus, metalObjects, ownVrfPoolObject, successfulCalls } from './support/metal.js';
import { poolGone } from './support/claims.js';
import { useVrfNamespace } from './support/vrf-namespace.js';

// Metal misbehaving while a pool is created and deleted: 429 and 5xx storms, dropped connections,
// and creates whose answer never arrives although Metal acted. Each ends with exactly one of each
// resource while the pool lives and none after it is gone.
const space = useVrfNamespace('ipam-vrf-faults', { seed: 'vrf-faults' });
const { kc, objects } = space;
let sim: Simulator;
const converged = { timeoutMs: 90_000 };

beforeAll(() => {
  ({ sim } = space);
});

const creates = ['createVrf', 'createVirtualNetwork', 'requestIPReservation', 'createMetalGateway'] as const;
const deletes = ['deleteMetalGateway', 'deleteIPAddress', 'deleteVirtualNetwork', 'deleteVrf'] as const;

/** One fault of each kind the storm holds, in the order of the four operations. */
const EACH_KIND: readonly FaultRuleInput[] = [
  { fault: 'rate-limit', retryAfterSeconds: 0 },
  { fault: 'server-error', status: 503 },
  { fault: 'server-error', status: 502, html: true },
  { fault: 'drop' },
];

/**
 * The first call of each operation answered by a fault of another kind, ahead of the random storm:
 * whatever the dice do, every kind hits a create (or a delete), and each must still end in exactly
 * one success. A rule added first answers its call; the storm's rules do not roll for it.
 */
function eachKindOnce(operations: readonly string[]): FaultRule[] {
  return operations.map((operationId, i) => sim.faults.add({ ...EACH_KIND[i]!, operationId, times: 1 }));
}

describe('a 429/5xx storm', () => {
  test(
    'during creation and deletion converges, creates each resource once and leaves nothing behind',
    async () => {
      const ns = await space.namespaceWithController('ipam-vrf-storm');
      const onCreates = eachKindOnce(creates);
      const rules = [
        sim.faults.add({ fault: 'rate-limit', probability: 0.35, retryAfterSeconds: 0 }),
        sim.faults.add({ fault: 'server-error', status: 503, probability: 0.25 }),
        sim.faults.add({ fault: 'server-error', status: 502, probability: 0.1, html: true }),
        sim.faults.add({ fault: 'drop', probability: 0.05 }),
      ];
      const before = sim.requests.lastSeq();
      const ready = await createReadyPool(objects, ownVrfPoolObject('stormy', ns, { octet: 65, vxlan: 1400 }), {
        timeoutMs: converged.timeoutMs,
      });
      const faulted = sim.requests.entries({ afterSeq: before }).filter((e) => e.faultRuleId !== undefined).length;
      expect(onCreates.map((r) => [r.operationId, r.fault, r.fired])).toEqual(creates.map((op, i) => [op, EACH_KIND[i]?.fault, 1]));
      process.stderr.write(`storm during creation: ${sim.requests.count({ afterSeq: before })} calls, ${faulted} answered by faults\n`);
      expect(metalObjects(sim)).toEqual({
        vrfs: [ready.status.vrf.vrfID],
        vlans: [ready.status.vrf.vlanID],
        reservations: [ready.status.vrf.reservationID],
        gateways: [ready.status.vrf.metalGatewayID],
      });
      for (const op of creates) expect([op, successfulCalls(sim, op)]).toEqual([op, 1]);

      await objects.create(kinds.claim(), claimObject('stormy-1', ns, { pool: 'stormy' }));
      await waitFor('stormy-1 bound', async () => (await objects.get(kinds.address(), 'stormy-1', ns))?.spec.address === '10.65.1.2', {
        timeoutMs: timeouts.claimBound,
      });
      await objects.delete(kinds.claim(), 'stormy-1', ns);
      const beforeDelete = sim.requests.lastSeq();
      const onDeletes = eachKindOnce(deletes);
      await objects.delete(kinds.pool, 'stormy', ns);
      await poolGone({ objects, namespace: ns }, 'stormy', converged.timeoutMs);
      for (const rule of rules) sim.faults.remove(rule.id);
      const faultedDeletes = sim.requests.entries({ afterSeq: beforeDelete }).filter((e) => e.faultRuleId !== undefined).length;
      process.stderr.write(
        `storm during deletion: ${sim.requests.count({ afterSeq: beforeDelete })} calls, ${faultedDeletes} answered by faults\n`,
      );
      expect(onDeletes.map((r) => [r.operationId, r.fault, r.fired])).toEqual(deletes.map((op, i) => [op, EACH_KIND[i]?.fault, 1]));
      expect(metalObjects(sim)).toEqual({ vrfs: [], vlans: [], reservations: [], gateways: [] });
      for (const op of deletes) expect([op, successfulCalls(sim, op)]).toEqual([op, 1]);
    },
    testTimeout(converged.timeoutMs, timeouts.claimBound, converged.timeoutMs),
  );
});

describe('creates whose answer is lost after Metal acted', () => {
  test(
    'are found again by tag, network or reservation and never repeated',
    async () => {
      // The client gives up after 300 ms; Metal answers after 800 ms, having created the object.
      // Passes that come sooner (the pool's own updates wake one at once) find nothing yet and must
      // not create: they wait out the settle time (2 s), then find what the lost call made.
      const ns = await space.namespaceWithController('ipam-vrf-lost', { timeoutMs: 300, settleMs: 2_000 });
      const rules = creates.map((operationId) => sim.faults.add({ fault: 'latency', operationId, latencyMs: 800, times: 1 }));
      const before = sim.requests.lastSeq();
      const ready = await createReadyPool(objects, ownVrfPoolObject('lost', ns, { octet: 66, vxlan: 1500 }), {
        timeoutMs: converged.timeoutMs,
      });
      for (const rule of rules) expect(rule.fired).toBe(1);
      for (const operationId of creates)
        expect([operationId, sim.requests.count({ afterSeq: before, operationId })]).toEqual([operationId, 1]);
      expect(metalObjects(sim)).toEqual({
        vrfs: [ready.status.vrf.vrfID],
        vlans: [ready.status.vrf.vlanID],
        reservations: [ready.status.vrf.reservationID],
        gateways: [ready.status.vrf.metalGatewayID],
      });
      expect(ready.status.vrf.created).toEqual(['VRF', 'VLAN', 'Reservation', 'MetalGateway']);
      await objects.delete(kinds.pool, 'lost', ns);
      await poolGone({ objects, namespace: ns }, 'lost', converged.timeoutMs);
      expect(metalObjects(sim)).toEqual({ vrfs: [], vlans: [], reservations: [], gateways: [] });
    },
    testTimeout(converged.timeoutMs, converged.timeoutMs),
  );
});

describe('a pool whose status was lost', () => {
  test(
    'finds what it created by its tags, creates nothing, and still deletes all of it',
    async () => {
      const ns = await space.extraNamespace('ipam-vrf-restore');
      await createCredentials(kc, ns);
      const first = await space.runController(ns);
      const ready = await createReadyPool(objects, ownVrfPoolObject('restored', ns, { octet: 72, vxlan: 1900 }));
      await first.stop();
      await loseVrfStatus(kc, { namespace: ns, name: 'restored' });
      expect((await objects.get(kinds.pool, 'restored', ns))?.status?.vrf).toBeUndefined();

      const before = sim.requests.lastSeq();
      await space.runController(ns);
      const again = await waitFor(
        'status.vrf rebuilt',
        async () => {
          const pool = await objects.get(kinds.pool, 'restored', ns);
          return pool?.status?.vrf?.metalGatewayID === undefined ? undefined : pool;
        },
        { timeoutMs: timeouts.claimBound },
      );
      expect(again.status.vrf).toEqual(ready.status.vrf);
      expect(sim.requests.countByOperation({ afterSeq: before })).toEqual({
        findVrfs: 1,
        findVirtualNetworks: 1,
        findVrfIpReservations: 1,
      });

      await objects.delete(kinds.pool, 'restored', ns);
      await poolGone({ objects, namespace: ns }, 'restored', converged.timeoutMs);
      expect(metalObjects(sim)).toEqual({ vrfs: [], vlans: [], reservations: [], gateways: [] });
    },
    testTimeout(timeouts.claimBound, timeouts.claimBound, converged.timeoutMs),
  );
});
