import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import type { Simulator } from '@metal-l2/metal-sim';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, projectCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects, claimObject, kinds } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import type { RunningIpamController } from '../src/start.js';
import {
  TOKEN,
  capturedLogger,
  createCredentials,
  metalObjects,
  poolCondition,
  runVrfController,
  startMetal,
  successfulCalls,
  vrfPoolObject,
} from './support/metal.js';

// Metal misbehaving while a pool is created and deleted: 429 and 5xx storms, dropped connections,
// and creates whose answer never arrives although Metal acted. Each ends with exactly one of each
// resource while the pool lives and none after it is gone.
const kc = loadKubeConfig();
const objects = new Objects(kc);
const { logger, lines } = capturedLogger();
let sim: Simulator;
const namespaces: string[] = [];
const controllers: RunningIpamController[] = [];
const converged = { timeoutMs: 90_000 };

beforeAll(async () => {
  await installCrds(kc, [...(await upstreamCrds('capiV1_14')), ...(await projectCrds())]);
  sim = await startMetal({ seed: 'vrf-faults' });
});

afterAll(async () => {
  sim.faults.clear();
  for (const ns of namespaces) {
    for (const claim of await objects.list(kinds.claim(), ns)) await objects.delete(kinds.claim(), claim.metadata.name, ns);
    for (const pool of await objects.list(kinds.pool, ns)) await objects.delete(kinds.pool, pool.metadata.name, ns);
  }
  await waitFor(
    'every pool of the file gone',
    async () => {
      for (const ns of namespaces) if ((await objects.list(kinds.pool, ns)).length > 0) return false;
      return true;
    },
    { timeoutMs: timeouts.claimBound },
  ).catch(() => undefined);
  await Promise.all(controllers.map((c) => c.stop()));
  for (const ns of namespaces) await deleteTestNamespace(kc, ns);
  const report = sim.contract?.report();
  await sim.contract?.close();
  await sim.close();
  if (report !== undefined) expect(report.violations).toEqual([]);
  expect(lines.join('')).not.toContain(TOKEN);
});

/** Drops status.vrf, as a backup restore or clusterctl move (which carry no status) would. */
async function loseVrfStatus(ns: string, name: string): Promise<void> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  await api.patchNamespacedCustomObjectStatus(
    {
      group: kinds.pool.group,
      version: kinds.pool.version,
      plural: kinds.pool.plural,
      namespace: ns,
      name,
      body: { status: { vrf: null } },
    },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
}

async function namespaceWithController(prefix: string, options: { timeoutMs?: number; settleMs?: number } = {}): Promise<string> {
  const ns = await createTestNamespace(kc, prefix);
  namespaces.push(ns);
  controllers.push(await runVrfController(kc, ns, { sim, logger, ...options }));
  await createCredentials(kc, ns);
  return ns;
}

const creates = ['createVrf', 'createVirtualNetwork', 'requestIPReservation', 'createMetalGateway'] as const;
const deletes = ['deleteMetalGateway', 'deleteIPAddress', 'deleteVirtualNetwork', 'deleteVrf'] as const;

describe('a 429/5xx storm', () => {
  test('during creation and deletion converges, creates each resource once and leaves nothing behind', async () => {
    const ns = await namespaceWithController('ipam-vrf-storm');
    const rules = [
      sim.faults.add({ fault: 'rate-limit', probability: 0.35, retryAfterSeconds: 0 }),
      sim.faults.add({ fault: 'server-error', status: 503, probability: 0.25 }),
      sim.faults.add({ fault: 'server-error', status: 502, probability: 0.1, html: true }),
      sim.faults.add({ fault: 'drop', probability: 0.05 }),
    ];
    const before = sim.requests.lastSeq();
    await objects.create(
      kinds.pool,
      vrfPoolObject('stormy', ns, {
        addresses: ['10.65.1.0/24'],
        create: { name: `stormy-${ns}`, ipRanges: ['10.65.0.0/16'] },
        vxlan: 1400,
        metalGateway: true,
      }),
    );
    const ready = await poolCondition(objects, { name: 'stormy', namespace: ns }, { type: 'Ready', status: 'True', ...converged });
    const faulted = sim.requests.entries({ afterSeq: before }).filter((e) => e.faultRuleId !== undefined).length;
    expect(faulted).toBeGreaterThan(0);
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
    await objects.delete(kinds.pool, 'stormy', ns);
    await waitFor('stormy gone', async () => (await objects.get(kinds.pool, 'stormy', ns)) === undefined, converged);
    for (const rule of rules) sim.faults.remove(rule.id);
    const faultedDeletes = sim.requests.entries({ afterSeq: beforeDelete }).filter((e) => e.faultRuleId !== undefined).length;
    process.stderr.write(
      `storm during deletion: ${sim.requests.count({ afterSeq: beforeDelete })} calls, ${faultedDeletes} answered by faults\n`,
    );
    expect(faultedDeletes).toBeGreaterThan(0);
    expect(metalObjects(sim)).toEqual({ vrfs: [], vlans: [], reservations: [], gateways: [] });
    for (const op of deletes) expect([op, successfulCalls(sim, op)]).toEqual([op, 1]);
  });
});

describe('creates whose answer is lost after Metal acted', () => {
  test('are found again by tag, network or reservation and never repeated', async () => {
    // The client gives up after 300 ms; Metal answers after 800 ms, having created the object.
    // Passes that come sooner (the pool's own updates wake one at once) find nothing yet and must
    // not create: they wait out the settle time (2 s), then find what the lost call made.
    const ns = await namespaceWithController('ipam-vrf-lost', { timeoutMs: 300, settleMs: 2_000 });
    const rules = creates.map((operationId) => sim.faults.add({ fault: 'latency', operationId, latencyMs: 800, times: 1 }));
    const before = sim.requests.lastSeq();
    await objects.create(
      kinds.pool,
      vrfPoolObject('lost', ns, {
        addresses: ['10.66.1.0/24'],
        create: { name: `lost-${ns}`, ipRanges: ['10.66.0.0/16'] },
        vxlan: 1500,
        metalGateway: true,
      }),
    );
    const ready = await poolCondition(objects, { name: 'lost', namespace: ns }, { type: 'Ready', status: 'True', ...converged });
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
    await waitFor('lost gone', async () => (await objects.get(kinds.pool, 'lost', ns)) === undefined, converged);
    expect(metalObjects(sim)).toEqual({ vrfs: [], vlans: [], reservations: [], gateways: [] });
  });
});

describe('a pool whose status was lost', () => {
  test('finds what it created by its tags, creates nothing, and still deletes all of it', async () => {
    const ns = await createTestNamespace(kc, 'ipam-vrf-restore');
    namespaces.push(ns);
    await createCredentials(kc, ns);
    const first = await runVrfController(kc, ns, { sim, logger });
    await objects.create(
      kinds.pool,
      vrfPoolObject('restored', ns, {
        addresses: ['10.72.1.0/24'],
        create: { name: `restored-${ns}`, ipRanges: ['10.72.0.0/16'] },
        vxlan: 1900,
        metalGateway: true,
      }),
    );
    const ready = await poolCondition(objects, { name: 'restored', namespace: ns }, { type: 'Ready', status: 'True' });
    await first.stop();
    await loseVrfStatus(ns, 'restored');
    expect((await objects.get(kinds.pool, 'restored', ns))?.status?.vrf).toBeUndefined();

    const before = sim.requests.lastSeq();
    controllers.push(await runVrfController(kc, ns, { sim, logger }));
    const again = await waitFor(
      'status.vrf rebuilt',
      async () => {
        const pool = await objects.get(kinds.pool, 'restored', ns);
        return pool?.status?.vrf?.metalGatewayID === undefined ? undefined : pool;
      },
      { timeoutMs: timeouts.claimBound },
    );
    expect(again.status.vrf).toEqual(ready.status.vrf);
    expect(sim.requests.countByOperation({ afterSeq: before })).toEqual({ findVrfs: 1, findVirtualNetworks: 1, findVrfIpReservations: 1 });

    await objects.delete(kinds.pool, 'restored', ns);
    await waitFor('restored gone', async () => (await objects.get(kinds.pool, 'restored', ns)) === undefined, converged);
    expect(metalObjects(sim)).toEqual({ vrfs: [], vlans: [], reservations: [], gateways: [] });
  });
});
