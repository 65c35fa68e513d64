import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import type { OwnedControlPlane } from '@metal-l2/local-control-plane';
import type { Simulator } from '@metal-l2/metal-sim';
import { loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, projectCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects, kinds, type Obj } from '@metal-l2/test-support/objects';
import { startPrivateControlPlane, stopPrivateControlPlane } from '@metal-l2/test-support/test-control-planes';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import {
  conditionOf,
  createCredentials,
  loseVrfStatus,
  metalObjects,
  poolCondition,
  vrfPoolObject,
  createReadyPool,
  ownVrfPoolObject,
} from './support/metal.js';
import { useVrfNamespace } from './support/vrf-namespace.js';

// Two management clusters (two real API servers, each with its own kube-system Namespace UID)
// share one Metal project, and each has a pool `<ns>/vrf-pool` with the same spec. Without the
// management-cluster tag, the second cluster's controller took the first one's VRF, VLAN and
// reservation for its own (same pool tag) and deleted them with its pool. Also here: objects
// tagged the old way (no cluster tag) keep working where this cluster's status records them, and
// are refused, not adopted, where it does not.

const space = useVrfNamespace('ipam-two-clusters', { seed: 'management-clusters' });
const { kc: kcA, objects: objectsA, lines } = space;
let plane: OwnedControlPlane | undefined;
let kcB: k8s.KubeConfig;
let objectsB: Objects;
let sim: Simulator;
let ns = '';
const converged = { timeoutMs: timeouts.claimBound };

beforeAll(async () => {
  ({ sim, ns } = space);
  plane = await startPrivateControlPlane('ipam-second-cluster');
  kcB = loadKubeConfig(plane.state.kubeconfig);
  objectsB = new Objects(kcB);
  await installCrds(kcB, [...(await upstreamCrds('capiV1_14')), ...(await projectCrds())]);
  // The same namespace name in the second cluster: the pools' tags would match exactly.
  await kcB.makeApiClient(k8s.CoreV1Api).createNamespace({ body: { metadata: { name: ns } } });
  for (const kc of [kcA, kcB]) await createCredentials(kc, ns);
}, 180_000);

// After the shared helper stopped every controller (the second cluster's too).
afterAll(async () => {
  await stopPrivateControlPlane(plane);
}, 60_000);

const sharedPool = (): Obj =>
  vrfPoolObject('vrf-pool', ns, {
    addresses: ['10.61.1.0/24'],
    create: { name: `shared-${ns}`, ipRanges: ['10.61.0.0/16'] },
    vxlan: 1610,
    metalGateway: true,
  });

async function kubeSystemUid(kc: k8s.KubeConfig): Promise<string> {
  return (await kc.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'kube-system' })).metadata?.uid ?? '';
}

describe('two management clusters, one Metal project, the same pool name', () => {
  test("deleting the pool in one cluster leaves the other's VRF, VLAN, reservation and gateway alone; the second is told the name is taken", async () => {
    await space.runController(ns);
    await objectsA.create(kinds.pool, sharedPool());
    const readyA = await poolCondition(objectsA, { name: 'vrf-pool', namespace: ns }, { type: 'Ready', status: 'True' });
    const ownedByA = metalObjects(sim);
    expect(ownedByA).toEqual({
      vrfs: [readyA.status.vrf.vrfID],
      vlans: [readyA.status.vrf.vlanID],
      reservations: [readyA.status.vrf.reservationID],
      gateways: [readyA.status.vrf.metalGatewayID],
    });
    await space.runController(ns, { kubeConfig: kcB });
    await objectsB.create(kinds.pool, sharedPool());
    // Settled either way: taken for its own (ready), or refused.
    const settled = await waitFor(
      'the second cluster pool settled',
      async () => {
        const pool = await objectsB.get(kinds.pool, 'vrf-pool', ns);
        const c = conditionOf(pool, 'VRFReady');
        return c?.status === 'True' || c?.reason === 'VRFConflict' ? c : undefined;
      },
      converged,
    );
    await objectsB.delete(kinds.pool, 'vrf-pool', ns);
    await waitFor('the second cluster pool gone', async () => (await objectsB.get(kinds.pool, 'vrf-pool', ns)) === undefined, converged);

    expect(metalObjects(sim)).toEqual(ownedByA);
    const uidA = await kubeSystemUid(kcA);
    expect(sim.store.vrfs.get(readyA.status.vrf.vrfID)?.tags).toEqual([
      `ipam.metal.x-k8s.io/pool=InClusterIPPool/${ns}/vrf-pool`,
      `ipam.metal.x-k8s.io/management-cluster=${uidA}`,
    ]);

    expect(settled).toMatchObject({ status: 'False', reason: 'VRFConflict' });
    expect(settled.message).toContain(`another management cluster (${uidA}; this one is ${await kubeSystemUid(kcB)})`);
    expect(sim.requests.entries({ operationId: 'createVrf' })).toHaveLength(1);

    // The first cluster still owns and deletes all of it.
    await objectsA.delete(kinds.pool, 'vrf-pool', ns);
    await waitFor('the first cluster pool gone', async () => (await objectsA.get(kinds.pool, 'vrf-pool', ns)) === undefined, converged);
    expect(metalObjects(sim)).toEqual({ vrfs: [], vlans: [], reservations: [], gateways: [] });
    expect(lines.join('')).not.toContain('tok-6f1c9e2a7b3d4c5e');
  });
});

/** Makes the pool's Metal objects look as metal-l2 tagged them before management-cluster tags. */
function stripClusterTags(): void {
  const { store } = sim;
  for (const o of [...store.vrfs.values(), ...store.vlans.values(), ...store.reservations.values()]) {
    const legacy = o.tags.filter((t) => !t.startsWith('ipam.metal.x-k8s.io/management-cluster='));
    o.tags.splice(0, o.tags.length, ...legacy);
  }
}

describe('objects tagged before management-cluster tags (upgrade)', () => {
  async function legacyPool(prefix: string, vxlan: number): Promise<{ namespace: string; pool: Obj }> {
    const namespace = await space.extraNamespace(prefix);
    await createCredentials(kcA, namespace);
    const first = await space.runController(namespace);
    const pool = await createReadyPool(objectsA, ownVrfPoolObject('old', namespace, { octet: 62, vxlan }));
    await first.stop();
    stripClusterTags();
    return { namespace, pool };
  }

  test('where this cluster’s status records them, they keep working and are deleted with their pool', async () => {
    const { namespace, pool } = await legacyPool('ipam-legacy-kept', 1620);
    const before = sim.requests.lastSeq();
    await space.runController(namespace);
    // The upgraded controller's first pass reads what status records, by id, and creates nothing.
    await waitFor(
      'the upgraded controller verified the gateway',
      () => sim.requests.count({ afterSeq: before, operationId: 'findVrfIpReservation' }) > 0,
      converged,
    );
    await poolCondition(objectsA, { name: 'old', namespace }, { type: 'Ready', status: 'True' });
    expect((await objectsA.get(kinds.pool, 'old', namespace))?.status?.vrf).toEqual(pool.status.vrf);
    expect(Object.keys(sim.requests.countByOperation({ afterSeq: before })).filter((op) => op.startsWith('create'))).toEqual([]);
    await objectsA.delete(kinds.pool, 'old', namespace);
    await waitFor('the legacy pool gone', async () => (await objectsA.get(kinds.pool, 'old', namespace)) === undefined, converged);
    const status = pool.status.vrf as Record<string, unknown>;
    const ids = new Set([status['vrfID'], status['vlanID'], status['reservationID'], status['metalGatewayID']]);
    expect(
      Object.values(metalObjects(sim))
        .flat()
        .filter((id) => ids.has(id)),
    ).toEqual([]);
    expect(pool.status.vrf.created).toEqual(['VRF', 'VLAN', 'Reservation', 'MetalGateway']);
  });

  test('where status is lost, they are refused (another cluster may own them), never adopted nor deleted', async () => {
    const { namespace, pool } = await legacyPool('ipam-legacy-lost', 1621);
    const before = metalObjects(sim);
    await loseVrfStatus(kcA, { namespace: namespace, name: 'old' });
    await space.runController(namespace);
    const refused = await poolCondition(objectsA, { name: 'old', namespace }, { type: 'VRFReady', status: 'False', reason: 'VRFConflict' });
    const uid = await kubeSystemUid(kcA);
    expect(conditionOf(refused, 'VRFReady')?.message).toContain(
      `carries the tag ipam.metal.x-k8s.io/pool=InClusterIPPool/${namespace}/old without a management-cluster tag`,
    );
    expect(conditionOf(refused, 'VRFReady')?.message).toContain(`add the tag ipam.metal.x-k8s.io/management-cluster=${uid}`);
    await objectsA.delete(kinds.pool, 'old', namespace);
    await waitFor('the refused pool gone', async () => (await objectsA.get(kinds.pool, 'old', namespace)) === undefined, converged);
    expect(metalObjects(sim)).toEqual(before);
    expect(before.vrfs).toEqual([pool.status.vrf.vrfID]);
  });
});
