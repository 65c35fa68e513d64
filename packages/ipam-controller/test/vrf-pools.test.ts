import { beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import type { Simulator } from '@metal-l2/metal-sim';
import { claimObject, kinds, readyCondition, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import {
  METRO,
  PROJECT_ID,
  TOKEN,
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
import { boundAddress, poolGone } from './support/claims.js';
import { ControllerProcess, freePort } from '@metal-l2/test-support/controller-process';
import { withDelayedWatch } from './support/lagging-watch.js';
import { useVrfNamespace } from './support/vrf-namespace.js';

// VRF-backed pools against the real API server and the Metal simulator: a fresh pool creates
// VRF, VLAN, reservation and Metal Gateway and hands out addresses (never the gateway's); an
// adopted VRF is left alone; missing credentials and a subnet outside the VRF are reported; the
// token never shows. Call counts are exact: they are the budget the issue asks to record.
const space = useVrfNamespace('ipam-vrf', { seed: 'vrf-pools' });
const { kc, objects, lines } = space;
let sim: Simulator;
let ns = '';

beforeAll(async () => {
  ({ sim, ns } = space);
  await space.runController(ns);
});

const bound = (name: string): Promise<Obj> => boundAddress(space.site, name);
const gone = (name: string): Promise<void> => poolGone(space.site, name);

describe('a fresh VRF-backed pool', () => {
  test('creates VRF, VLAN, reservation and Metal Gateway in six calls, records every id, binds claims but never the gateway address, and deletes it all in five', async () => {
    await createCredentials(kc, ns);
    const before = sim.requests.lastSeq();
    const ready = await createReadyPool(objects, ownVrfPoolObject('fresh', ns, { octet: 60, vxlan: 1100, localASN: 65100 }));
    const creation = sim.requests.countByOperation({ afterSeq: before });
    expect(creation).toEqual({
      findVrfs: 1,
      createVrf: 1,
      findVirtualNetworks: 1,
      createVirtualNetwork: 1,
      requestIPReservation: 1,
      createMetalGateway: 1,
    });
    process.stderr.write(`Metal calls for a fresh VRF-backed pool: ${JSON.stringify(creation)}\n`);

    const [vrf] = [...sim.store.vrfs.values()];
    const [vlan] = [...sim.store.vlans.values()];
    const [reservation] = [...sim.store.reservations.values()];
    const [gateway] = [...sim.store.gateways.values()];
    expect(vrf).toMatchObject({
      name: `fresh-${ns}`,
      ipRanges: ['10.60.0.0/16'],
      localAsn: 65100,
      metroCode: METRO,
      tags: [
        `ipam.metal.x-k8s.io/pool=InClusterIPPool/${ns}/fresh`,
        expect.stringMatching(/^ipam\.metal\.x-k8s\.io\/management-cluster=[0-9a-f-]{36}$/),
      ],
    });
    expect(vlan).toMatchObject({ vxlan: 1100, metroCode: METRO });
    expect(reservation).toMatchObject({ type: 'vrf', vrfId: vrf?.id, prefix: 24 });
    expect(gateway).toMatchObject({ vlanId: vlan?.id, ipReservationId: reservation?.id });
    expect(ready.status.vrf).toEqual({
      vrfID: vrf?.id,
      vlanID: vlan?.id,
      vxlan: 1100,
      reservationID: reservation?.id,
      subnet: '10.60.1.0/24',
      metalGatewayID: gateway?.id,
      gatewayAddress: '10.60.1.1',
      created: ['VRF', 'VLAN', 'Reservation', 'MetalGateway'],
    });
    expect(conditionOf(ready, 'VRFReady')).toMatchObject({
      status: 'True',
      reason: 'VRFReady',
      message: expect.stringContaining('Metal Gateway 10.60.1.1'),
    });
    // .0 and .255 are reserved by the subnet, .1 by the Metal Gateway.
    expect(ready.status.ipAddresses).toEqual({ total: 253, used: 0, free: 253, outOfRange: 0 });
    expect(await eventsAbout(kc, ns, 'fresh')).toEqual(
      expect.arrayContaining([expect.stringMatching(/^MetalResourceCreated: created Metal Gateway/)]),
    );

    const afterReady = sim.requests.lastSeq();
    for (let i = 0; i < 3; i++) await objects.create(kinds.claim(), claimObject(`fresh-${i}`, ns, { pool: 'fresh' }));
    const addresses = await Promise.all([0, 1, 2].map((i) => bound(`fresh-${i}`)));
    expect(addresses.map((a) => a.spec.address).sort()).toEqual(['10.60.1.2', '10.60.1.3', '10.60.1.4']);
    // Without spec.gateway the IPAddresses carry the Metal Gateway as theirs.
    expect(addresses.map((a) => a.spec.gateway)).toEqual(['10.60.1.1', '10.60.1.1', '10.60.1.1']);
    // Claims come and go without a single Metal call: the verified pool is answered from memory.
    expect(sim.requests.count({ afterSeq: afterReady })).toBe(0);

    for (let i = 0; i < 3; i++) await objects.delete(kinds.claim(), `fresh-${i}`, ns);
    const beforeDelete = sim.requests.lastSeq();
    await objects.delete(kinds.pool, 'fresh', ns);
    await gone('fresh');
    const deletion = sim.requests.countByOperation({ afterSeq: beforeDelete });
    expect(deletion).toEqual({
      deleteMetalGateway: 1,
      deleteIPAddress: 1,
      deleteVirtualNetwork: 1,
      findVrfIpReservations: 1,
      deleteVrf: 1,
    });
    process.stderr.write(`Metal calls to delete it: ${JSON.stringify(deletion)}\n`);
    expect(metalObjects(sim)).toEqual({ vrfs: [], vlans: [], reservations: [], gateways: [] });
  });
});

describe('a VRF-backed pool whose controller sees the pool late', () => {
  test('deletes what it created once: the passes that its own status writes start find them recorded as gone, not the stale cache', async () => {
    // Every pool event reaches this controller 400 ms late, as on a busy replica: each record of
    // a deletion wakes a pass while the cache still shows the resource as created.
    const lateNs = await space.namespaceWithController('ipam-vrf-late', { cacheClient: withDelayedWatch('inclusterippools', 400) });
    await createReadyPool(objects, ownVrfPoolObject('late-cache', lateNs, { octet: 65, vxlan: 1400 }));
    const beforeDelete = sim.requests.lastSeq();
    await objects.delete(kinds.pool, 'late-cache', lateNs);
    const site = { ...space.site, namespace: lateNs };
    await poolGone(site, 'late-cache');
    // The passes woken by the last records run after the pool is gone. Fence: a claim of the gone
    // pool is told "not found" only by a pass whose cache no longer has the pool, which comes
    // after the pool's deletion event, so after every pass its earlier events started.
    await objects.create(kinds.claim(), claimObject('after-gone', lateNs, { pool: 'late-cache' }));
    await waitFor(
      'the claim of the gone pool told so by a pass that saw it gone',
      async () =>
        readyCondition(await objects.get(kinds.claim(), 'after-gone', lateNs))?.message?.endsWith('late-cache not found') === true,
      { timeoutMs: timeouts.claimBound },
    );
    expect(sim.requests.countByOperation({ afterSeq: beforeDelete })).toEqual({
      deleteMetalGateway: 1,
      deleteIPAddress: 1,
      deleteVirtualNetwork: 1,
      findVrfIpReservations: 1,
      deleteVrf: 1,
    });
  });
});

describe('--metal-rate-limit', () => {
  test("the controller binary sends Metal no faster than the flag says: at 1 request a second, burst 1, a fresh pool's six calls come a second apart", async () => {
    const pacedNs = await space.extraNamespace('ipam-vrf-paced');
    await createCredentials(kc, pacedNs);
    const [metricsPort, probePort] = [await freePort(), await freePort()];
    const controller = space.stopAfterAll(
      ControllerProcess.start({
        kubeconfig: space.kubeconfigPath,
        namespace: pacedNs,
        metricsPort,
        probePort,
        args: ['--metal-api-url', sim.baseUrl, '--controller-namespace', pacedNs, '--metal-rate-limit', '1:1'],
      }),
    );
    await controller.ready();
    const before = sim.requests.lastSeq();
    await createReadyPool(objects, ownVrfPoolObject('paced', pacedNs, { octet: 66, vxlan: 1500 }));
    const calls = sim.requests.entries({ afterSeq: before });
    expect(calls.map((c) => c.operationId)).toEqual([
      'findVrfs',
      'createVrf',
      'findVirtualNetworks',
      'createVirtualNetwork',
      'requestIPReservation',
      'createMetalGateway',
    ]);
    // The default (10 a second, burst 20) would send all six within the first second. Arrival times
    // carry the simulator's own lag (its event loop shares a loaded machine: 300 ms seen on one call),
    // so one gap may be short by that much and the next long: the median gap is a second, and no two
    // calls come together (a burst of 2 would send them milliseconds apart, a rate of 2 half a second).
    const arrived = calls.map((c) => Date.parse(c.at));
    const gaps = arrived.slice(1).map((t, i) => t - (arrived[i] ?? t));
    process.stderr.write(`--metal-rate-limit 1:1: calls ${gaps.join(' ms, ')} ms apart\n`);
    expect([...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)]).toBeGreaterThanOrEqual(900);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(500);
    expect(await controller.metric('metal_api_rate_limit_wait_seconds_total')).toBeGreaterThan(4);
    // The tests after this one count every Metal object of the project.
    await objects.delete(kinds.pool, 'paced', pacedNs);
    await poolGone({ ...space.site, namespace: pacedNs }, 'paced');
  });
});

describe('an adopted VRF', () => {
  test('is only read: the pool reserves its subnet and a gateway on an existing VLAN, and deletes only those', async () => {
    const metal = metalOf(sim);
    const vrf = await metal.vrfs.create(PROJECT_ID, { name: 'shared', metro: METRO, ip_ranges: ['10.61.0.0/16'] });
    const vlan = await metal.virtualNetworks.create(PROJECT_ID, { metro: METRO, vxlan: 1200 });
    const other = await metal.ipReservations.create(PROJECT_ID, { type: 'vrf', vrf_id: vrf.id ?? '', network: '10.61.9.0', cidr: 24 });
    const before = sim.requests.lastSeq();
    const ready = await createReadyPool(
      objects,
      vrfPoolObject('adopted', ns, { addresses: ['10.61.1.10-10.61.1.20'], vrfID: vrf.id ?? '', vxlan: 1200, metalGateway: true }),
    );
    expect(sim.requests.countByOperation({ afterSeq: before })).toEqual({
      findVrfById: 1,
      findVirtualNetworks: 1,
      findVrfIpReservations: 1,
      requestIPReservation: 1,
      createMetalGateway: 1,
    });
    expect(ready.status.vrf).toMatchObject({
      vrfID: vrf.id,
      vlanID: vlan.id,
      subnet: '10.61.1.0/24',
      gatewayAddress: '10.61.1.1',
      created: ['Reservation', 'MetalGateway'],
    });

    await objects.delete(kinds.pool, 'adopted', ns);
    await gone('adopted');
    expect(sim.store.vrfs.has(vrf.id ?? '')).toBe(true);
    expect(sim.store.vlans.has(vlan.id ?? '')).toBe(true);
    expect([...sim.store.reservations.keys()]).toEqual([other.id]);
    expect(sim.store.gateways.size).toBe(0);
    await metal.vrfs.delete(vrf.id ?? '');
    await metal.virtualNetworks.delete(vlan.id ?? '');
  });

  test('with the subnet already reserved and the gateway to make, the pool deletes the gateway alone', async () => {
    const metal = metalOf(sim);
    const vrf = await metal.vrfs.create(PROJECT_ID, { name: 'prepared', metro: METRO, ip_ranges: ['10.62.0.0/16'] });
    const vlan = await metal.virtualNetworks.create(PROJECT_ID, { metro: METRO, vxlan: 1300 });
    const reservation = await metal.ipReservations.create(PROJECT_ID, {
      type: 'vrf',
      vrf_id: vrf.id ?? '',
      network: '10.62.1.0',
      cidr: 24,
    });
    const ready = await createReadyPool(
      objects,
      vrfPoolObject('prepared', ns, { addresses: ['10.62.1.0/24'], vrfID: vrf.id ?? '', vxlan: 1300, metalGateway: true }),
    );
    expect(ready.status.vrf).toMatchObject({ reservationID: reservation.id, created: ['MetalGateway'] });
    await objects.delete(kinds.pool, 'prepared', ns);
    await gone('prepared');
    expect([
      sim.store.vrfs.has(vrf.id ?? ''),
      sim.store.vlans.has(vlan.id ?? ''),
      sim.store.reservations.has(reservation.id ?? ''),
    ]).toEqual([true, true, true]);
    expect(sim.store.gateways.size).toBe(0);
    await metal.vrfs.delete(vrf.id ?? '');
    await metal.virtualNetworks.delete(vlan.id ?? '');
  });

  test('whose ranges do not hold the pool subnet is refused with a clear reason, and nothing is reserved', async () => {
    const metal = metalOf(sim);
    const vrf = await metal.vrfs.create(PROJECT_ID, { name: 'elsewhere', metro: METRO, ip_ranges: ['10.70.0.0/16'] });
    await objects.create(kinds.pool, vrfPoolObject('outside', ns, { addresses: ['10.80.1.0/24'], vrfID: vrf.id ?? '' }));
    const pool = await poolCondition(
      objects,
      { name: 'outside', namespace: ns },
      { type: 'VRFReady', status: 'False', reason: 'SubnetOutsideVRF' },
    );
    expect(conditionOf(pool, 'VRFReady')?.message).toBe(
      `the pool subnet 10.80.1.0/24 is not inside the IP ranges of VRF ${vrf.id ?? ''} (10.70.0.0/16)`,
    );
    expect(readyCondition(pool)).toMatchObject({ status: 'False', reason: 'VRFNotReady' });
    expect([...sim.store.reservations.values()].filter((r) => r.vrfId === vrf.id)).toEqual([]);
    await objects.delete(kinds.pool, 'outside', ns);
    await gone('outside');
    await metal.vrfs.delete(vrf.id ?? '');
  });
});

describe('a VRF to create whose ranges do not hold the subnet', () => {
  test('is refused before anything is created in Metal', async () => {
    const before = sim.requests.lastSeq();
    await objects.create(
      kinds.pool,
      vrfPoolObject('misfit', ns, { addresses: ['10.90.1.0/24'], create: { name: `misfit-${ns}`, ipRanges: ['10.91.0.0/16'] } }),
    );
    const pool = await poolCondition(
      objects,
      { name: 'misfit', namespace: ns },
      { type: 'VRFReady', status: 'False', reason: 'SubnetOutsideVRF' },
    );
    expect(conditionOf(pool, 'VRFReady')?.message).toContain('10.90.1.0/24');
    expect(sim.requests.count({ afterSeq: before })).toBe(0);
    await objects.delete(kinds.pool, 'misfit', ns);
    await gone('misfit');
  });
});

describe('credentials', () => {
  test('a missing Secret holds the pool and its claims with CredentialsMissing until the Secret appears', async () => {
    await objects.create(kinds.pool, ownVrfPoolObject('late', ns, { octet: 63, secret: 'late-metal' }));
    const waiting = await poolCondition(
      objects,
      { name: 'late', namespace: ns },
      { type: 'VRFReady', status: 'False', reason: 'CredentialsMissing' },
    );
    expect(conditionOf(waiting, 'VRFReady')?.message).toBe(`Secret ${ns}/late-metal not found`);
    expect(readyCondition(waiting)).toMatchObject({
      status: 'False',
      reason: 'VRFNotReady',
      message: `CredentialsMissing: Secret ${ns}/late-metal not found`,
    });
    await objects.create(kinds.claim(), claimObject('late-1', ns, { pool: 'late' }));
    const claim = await waitFor(
      'late-1 PoolNotReady',
      async () => {
        const c = await objects.get(kinds.claim(), 'late-1', ns);
        return readyCondition(c)?.reason === 'PoolNotReady' ? c : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    expect(readyCondition(claim)?.message).toContain('CredentialsMissing');

    await createCredentials(kc, ns, { name: 'late-metal' });
    // No Metal Gateway on this pool: .1 is an address like any other.
    expect((await bound('late-1')).spec.address).toBe('10.63.1.1');
    await objects.delete(kinds.claim(), 'late-1', ns);
    await objects.delete(kinds.pool, 'late', ns);
    await gone('late');
  });

  test('a Secret deleted before its pool (as when a namespace goes) does not strand the pool: the last token that worked deletes', async () => {
    await createCredentials(kc, ns, { name: 'short-lived' });
    const ready = await createReadyPool(objects, ownVrfPoolObject('orphan', ns, { octet: 71, vxlan: 1800, secret: 'short-lived' }));
    await kc.makeApiClient(k8s.CoreV1Api).deleteNamespacedSecret({ namespace: ns, name: 'short-lived' });
    await objects.delete(kinds.pool, 'orphan', ns);
    await gone('orphan');
    const { vrfID, vlanID, reservationID, metalGatewayID } = ready.status.vrf;
    expect([
      sim.store.vrfs.has(vrfID),
      sim.store.vlans.has(vlanID),
      sim.store.reservations.has(reservationID),
      sim.store.gateways.has(metalGatewayID),
    ]).toEqual([false, false, false, false]);
  });

  test('a token Metal refuses is reported with Metal’s answer, and the token shows nowhere: conditions, events, logs', async () => {
    const wrong = 'tok-wrong-91c2e6d0-never-shown';
    await createCredentials(kc, ns, { name: 'wrong-metal', token: wrong });
    await objects.create(kinds.pool, ownVrfPoolObject('refused', ns, { octet: 64, secret: 'wrong-metal' }));
    const pool = await poolCondition(
      objects,
      { name: 'refused', namespace: ns },
      { type: 'VRFReady', status: 'False', reason: 'MetalAPIError' },
    );
    expect(conditionOf(pool, 'VRFReady')?.message).toBe(
      `list VRFs of project ${PROJECT_ID} metro ${METRO}: findVrfs (GET /projects/${PROJECT_ID}/vrfs) answered HTTP 401: Invalid authentication token`,
    );
    await objects.delete(kinds.pool, 'refused', ns);
    await gone('refused');

    const everything = [
      JSON.stringify(await objects.list(kinds.pool, ns)),
      (await eventsAbout(kc, ns, 'fresh')).join('\n'),
      (await eventsAbout(kc, ns, 'refused')).join('\n'),
      lines.join(''),
    ];
    expect(lines.length).toBeGreaterThan(0);
    for (const text of everything) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(wrong);
    }
  });
});
