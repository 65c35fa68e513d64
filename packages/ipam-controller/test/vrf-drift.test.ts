import { beforeAll, describe, expect, test } from '@jest/globals';
import type { Simulator } from '@metal-l2/metal-sim';
import { claimObject, kinds, readyCondition, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import {
  METRO,
  PROJECT_ID,
  conditionOf,
  createCredentials,
  eventsAbout,
  metalObjects,
  metalOf,
  poolCondition,
  vrfPoolObject,
  createReadyPool,
  ownVrfPoolObject,
} from './support/metal.js';
import { poolGone } from './support/claims.js';
import { useVrfNamespace } from './support/vrf-namespace.js';

// Someone deletes what a pool relies on in Metal. A resync (every 1.5 s here, 5 min by default)
// notices: the pool reports DriftDetected (condition and Event) and recreates what it may create;
// what it adopted and cannot recreate stays reported. Bound claims keep their addresses.
const space = useVrfNamespace('ipam-vrf-drift', { seed: 'vrf-drift' });
const { kc, objects } = space;
const resyncMs = 1_500;
let sim: Simulator;
let ns = '';

beforeAll(async () => {
  ({ sim, ns } = space);
  await space.runController(ns, { resyncMs });
  await createCredentials(kc, ns);
});

function vrfReadySince(pool: Obj | undefined): string | undefined {
  return (pool?.status?.conditions as { type: string; lastTransitionTime?: string }[] | undefined)?.find((c) => c.type === 'VRFReady')
    ?.lastTransitionTime;
}

describe('drift', () => {
  test('a ready pool costs three reads per resync', async () => {
    await createReadyPool(objects, ownVrfPoolObject('steady', ns, { octet: 67, vxlan: 1600 }));
    const mark = sim.requests.lastSeq();
    await waitFor('a resync', () => sim.requests.count({ afterSeq: mark }) >= 3, { timeoutMs: resyncMs * 4 });
    const resync = sim.requests.countByOperation({ afterSeq: mark });
    expect(resync).toEqual({ findVrfById: 1, getVirtualNetwork: 1, findVrfIpReservation: 1 });
    process.stderr.write(`Metal calls per resync of a ready VRF-backed pool: ${JSON.stringify(resync)}\n`);
    await objects.delete(kinds.pool, 'steady', ns);
    await poolGone(space.site, 'steady');
  });

  test('a deleted reservation (and the gateway that went with it) is reported and made again; the claim keeps its address', async () => {
    const ready = await createReadyPool(objects, ownVrfPoolObject('drifty', ns, { octet: 68, vxlan: 1700 }));
    await objects.create(kinds.claim(), claimObject('drifty-1', ns, { pool: 'drifty' }));
    const address = await waitFor(
      'drifty-1 bound',
      async () => (await objects.get(kinds.address(), 'drifty-1', ns))?.spec.address as string | undefined,
      { timeoutMs: timeouts.claimBound },
    );
    const before = ready.status.vrf;
    const since = vrfReadySince(ready);

    await metalOf(sim).ipReservations.delete(before.reservationID);
    expect(sim.store.gateways.size).toBe(0);
    const repaired = await waitFor(
      'a new reservation and gateway in status',
      async () => {
        const pool = await objects.get(kinds.pool, 'drifty', ns);
        const vrf = pool?.status?.vrf;
        const ok =
          conditionOf(pool, 'VRFReady')?.status === 'True' &&
          vrf?.reservationID !== undefined &&
          vrf.reservationID !== before.reservationID &&
          vrf.metalGatewayID !== undefined;
        return ok ? pool : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    // VRFReady went False (DriftDetected) and back to True: its transition time moved.
    expect(vrfReadySince(repaired)).not.toBe(since);
    expect(repaired.status.vrf).toMatchObject({
      vrfID: before.vrfID,
      vlanID: before.vlanID,
      gatewayAddress: '10.68.1.1',
      created: ['VRF', 'VLAN', 'Reservation', 'MetalGateway'],
    });
    expect(metalObjects(sim)).toEqual({
      vrfs: [before.vrfID],
      vlans: [before.vlanID],
      reservations: [repaired.status.vrf.reservationID],
      gateways: [repaired.status.vrf.metalGatewayID],
    });
    const events = await eventsAbout(kc, ns, 'drifty');
    expect(events).toContainEqual(
      `DriftDetected: reservation ${before.reservationID} of 10.68.1.0/24 in VRF ${before.vrfID} is gone from Metal; reserving the subnet again`,
    );
    expect((await objects.get(kinds.address(), 'drifty-1', ns))?.spec.address).toBe(address);
  });

  test('a deleted Metal Gateway alone is made again', async () => {
    const before = (await objects.get(kinds.pool, 'drifty', ns))?.status?.vrf;
    await metalOf(sim).metalGateways.delete(before.metalGatewayID);
    const repaired = await waitFor(
      'a new gateway in status',
      async () => {
        const pool = await objects.get(kinds.pool, 'drifty', ns);
        const vrf = pool?.status?.vrf;
        return conditionOf(pool, 'VRFReady')?.status === 'True' &&
          vrf?.metalGatewayID !== undefined &&
          vrf.metalGatewayID !== before.metalGatewayID
          ? pool
          : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    expect(repaired.status.vrf.reservationID).toBe(before.reservationID);
    expect([...sim.store.gateways.keys()]).toEqual([repaired.status.vrf.metalGatewayID]);
    expect(await eventsAbout(kc, ns, 'drifty')).toContainEqual(
      `DriftDetected: Metal Gateway ${before.metalGatewayID} of 10.68.1.0/24 is gone from Metal; creating it again`,
    );
  });

  test('an adopted VRF that disappears is reported, not recreated, and the pool lets nothing new be allocated', async () => {
    const metal = metalOf(sim);
    const vrf = await metal.vrfs.create(PROJECT_ID, { name: 'borrowed', metro: METRO, ip_ranges: ['10.69.0.0/16'] });
    await createReadyPool(objects, vrfPoolObject('borrower', ns, { addresses: ['10.69.1.0/24'], vrfID: vrf.id ?? '' }));
    await metal.vrfs.delete(vrf.id ?? '');
    const pool = await poolCondition(
      objects,
      { name: 'borrower', namespace: ns },
      { type: 'VRFReady', status: 'False', reason: 'VRFNotFound' },
    );
    expect(conditionOf(pool, 'VRFReady')?.message).toBe(`VRF ${vrf.id ?? ''} does not exist in Metal, or the token cannot see it`);
    expect(readyCondition(pool)).toMatchObject({ status: 'False', reason: 'VRFNotReady' });
    expect([...sim.store.vrfs.values()].filter((v) => v.name === 'borrowed')).toEqual([]);
    await objects.create(kinds.claim(), claimObject('borrower-1', ns, { pool: 'borrower' }));
    await waitFor(
      'borrower-1 PoolNotReady',
      async () => readyCondition(await objects.get(kinds.claim(), 'borrower-1', ns))?.reason === 'PoolNotReady',
      { timeoutMs: timeouts.claimBound },
    );
  });
});
