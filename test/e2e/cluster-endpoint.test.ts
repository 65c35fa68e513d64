import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
import { watchFirstVersions, type FirstVersions } from './support/first-versions.js';
import * as k8s from '@kubernetes/client-node';
import { startIpamController, type RunningIpamController } from '@metal-l2/ipam-controller';
import { createLogger } from '@metal-l2/kube';
import { startNetworkController, type RunningNetworkController } from '@metal-l2/network-controller';
import { makeServingCertificate } from '@metal-l2/test-support/certificates';
import { createTestNamespace, deleteTestNamespace } from '@metal-l2/test-support/cluster';
import type { Kind, Obj } from '@metal-l2/test-support/objects';
import { deleteMovedObjects, moveObjects } from '@metal-l2/test-support/clusterctl-move';
import { HOLD, HOLD_REASON, TEMPLATE_ANNOTATION, addressKind, clusterEndpoints, held } from './support/cluster-endpoints.js';
import { eventsOf, poolUsed as poolUsedIn, waitPoolUsed } from './support/network-probes.js';
import { injectedText } from './support/vip-cluster.js';
import {
  CLUSTER,
  linesLogger,
  CREDENTIALS_SECRET,
  FAST_TIMINGS,
  TOKEN,
  condition,
  createMachine,
  createPool,
  createTemplate,
  createVlans,
  netKinds,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
  waitMachineNetworkReason,
} from './support/network-world.js';

// A Cluster whose control-plane endpoint is an address on a VLAN from a pool: our webhook holds
// it at creation, the controller claims the address (a claim owned by the Cluster), writes it into
// Cluster.spec.controlPlaneEndpoint and ends the hold. Real API server, our webhook called by it,
// our IPAM provider serving the claim, the garbage collector releasing it with the Cluster.

const world = useNetworkWorld('net-endpoint');

const {
  cluster,
  createCluster,
  createEndpointPool,
  createEndpointTemplate,
  eventReasons,
  holdReasonOf,
  provisionLinkedCluster,
  waitEndpointReason,
  waitForEvent,
} = clusterEndpoints(world);

let firstVersions: FirstVersions | undefined;

beforeAll(async () => {
  firstVersions = await watchFirstVersions(world.kc, netKinds.cluster, world.ns);
});

afterAll(() => firstVersions?.stop());

const poolUsed = (name: string): Promise<number | undefined> => poolUsedIn(world, name);

describe('cluster endpoint from a pool', () => {
  test('a linked Cluster is created held, gets the pool address as its endpoint, and is released', async () => {
    await createEndpointPool('vip', ['192.168.40.10-192.168.40.20']);
    await createEndpointTemplate('vip', 'vip');
    await createCluster('ep-a', 'vip');
    const first = await (firstVersions as FirstVersions).of('ep-a', 10_000);
    expect(held(first)).toBe(true);
    expect(first.spec?.controlPlaneEndpoint?.host ?? '').toBe('');

    const ep = await waitEndpointReason('ep-a', 'Ready', 'Ready');
    expect(ep.status).toMatchObject({ address: '192.168.40.10', prefix: 24, port: 6443, claimName: 'ep-a-endpoint' });
    expect(ep.status.virtualRouterID).toBe(ep.spec.virtualRouterID);
    expect(ep.spec.virtualRouterID).toBeGreaterThanOrEqual(1);
    expect(ep.spec.virtualRouterID).toBeLessThanOrEqual(255);
    const c = await waitFor(
      'Cluster ep-a released',
      async () => ((await cluster('ep-a')).spec?.paused === true ? false : cluster('ep-a')),
      {
        timeoutMs: 10_000,
      },
    );
    expect(c.spec.controlPlaneEndpoint).toEqual({ host: '192.168.40.10', port: 6443 });
    expect(c.metadata.annotations?.[HOLD]).toBeUndefined();

    // The claim is the Cluster's (controller owner), made unlinked (a provider leaves the claims of
    // a paused Cluster alone, and this one was paused until the address was there) and linked by
    // the cluster-name label once bound, so that a pause by clusterctl move pauses it too.
    const claim = await world.objects.get(netKinds.claim, 'ep-a-endpoint', world.ns);
    expect(claim?.spec).toEqual({ poolRef: poolRef('vip') });
    expect(claim?.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBe('ep-a');
    expect(claim?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Cluster', uid: c.metadata.uid, controller: true })]);
    expect(ep.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Cluster', uid: c.metadata.uid, controller: true })]);
  });

  test('a Cluster created with another endpoint (a hand-set one) is never held nor overwritten, and no address is claimed for it: EndpointAlreadySet', async () => {
    await createEndpointTemplate('vip-port', 'vip', { port: 8443, virtualRouterID: 42 });
    await createCluster('ep-set', 'vip-port', { host: '203.0.113.7', port: 6443 });
    const first = await (firstVersions as FirstVersions).of('ep-set', 10_000);
    expect(first.spec?.paused ?? false).toBe(false);
    expect(first.metadata.annotations?.[HOLD]).toBeUndefined();

    // The controller saw it: it says why it neither claimed nor wrote an address.
    const ep = await waitEndpointReason('ep-set', 'EndpointSet', 'EndpointAlreadySet');
    const message = condition(ep, 'EndpointSet')?.message ?? '';
    expect(message).toContain('203.0.113.7:6443');
    expect(condition(ep, 'Ready')).toMatchObject({ status: 'False', reason: 'EndpointAlreadySet' });
    expect(ep.spec.virtualRouterID).toBe(42);
    expect(ep.status.address).toBeUndefined();
    expect(await world.objects.get(netKinds.claim, 'ep-set-endpoint', world.ns)).toBeUndefined();
    expect(eventReasons('ep-set')).not.toContain('ClaimCreated');
    const c = await cluster('ep-set');
    expect(c.spec.controlPlaneEndpoint).toEqual({ host: '203.0.113.7', port: 6443 });
    expect(c.spec.paused ?? false).toBe(false);
  });

  test('a Cluster created with its own endpoint and a missing template says so, and the reason goes once the template exists', async () => {
    await createCluster('ep-set-late', 'set-late', { host: '203.0.113.8', port: 6443 });
    expect(await holdReasonOf('ep-set-late', 'TemplateNotFound')).toContain('no endpoint is claimed until it exists');
    expect(held(await cluster('ep-set-late'))).toBe(false);
    await createEndpointTemplate('set-late', 'vip');
    await waitEndpointReason('ep-set-late', 'EndpointSet', 'EndpointAlreadySet');
    await waitFor(
      'the hold reason of ep-set-late gone',
      async () => (await cluster('ep-set-late')).metadata.annotations?.[HOLD_REASON] === undefined,
      {
        timeoutMs: 10_000,
      },
    );
    expect(await world.objects.get(netKinds.claim, 'ep-set-late-endpoint', world.ns)).toBeUndefined();
  });

  test('a missing template keeps the Cluster held with a reason; the template created later lets it go on', async () => {
    await createCluster('ep-late', 'late');
    const reason = await waitFor(
      'the hold reason on Cluster ep-late',
      async () => (await cluster('ep-late')).metadata.annotations?.[HOLD_REASON],
      { timeoutMs: 30_000 },
    );
    expect(reason).toContain('TemplateNotFound');
    expect(reason).toContain('late');
    expect(held(await cluster('ep-late'))).toBe(true);
    await waitForEvent('ep-late', 'TemplateNotFound');
    expect(await world.objects.get(netKinds.clusterEndpoint, 'ep-late', world.ns)).toBeUndefined();

    await createEndpointTemplate('late', 'vip');
    await waitEndpointReason('ep-late', 'Ready', 'Ready');
    const c = await waitFor(
      'Cluster ep-late released',
      async () => ((await cluster('ep-late')).spec?.paused === true ? false : cluster('ep-late')),
      {
        timeoutMs: 10_000,
      },
    );
    expect(c.metadata.annotations?.[HOLD_REASON]).toBeUndefined();
    expect(c.spec.controlPlaneEndpoint.host).toMatch(/^192\.168\.40\./);
  });

  test('an exhausted pool keeps the Cluster held and says so; deleting the Cluster that has the address gives it over', async () => {
    await createEndpointPool('one', ['192.168.40.100']);
    await createEndpointTemplate('one', 'one');
    await createCluster('ex-1', 'one');
    await waitEndpointReason('ex-1', 'Ready', 'Ready');
    await waitPoolUsed(world, 'one', 1);
    await createCluster('ex-2', 'one');
    const waiting = await waitEndpointReason('ex-2', 'AddressAllocated', 'PoolExhausted');
    expect(condition(waiting, 'Ready')).toMatchObject({ status: 'False', reason: 'PoolExhausted' });
    expect(held(await cluster('ex-2'))).toBe(true);
    expect(await holdReasonOf('ex-2', 'PoolExhausted')).toContain('one');
    await waitForEvent('ex-2', 'PoolExhausted');

    // Owner GC takes the ClusterEndpoint and the claim with the Cluster; the IPAM provider gives the address back.
    await world.objects.delete(netKinds.cluster, 'ex-1', world.ns);
    await waitFor(
      'the claim of ex-1 gone',
      async () => (await world.objects.get(netKinds.claim, 'ex-1-endpoint', world.ns)) === undefined,
      {
        timeoutMs: 30_000,
      },
    );
    const ep = await waitEndpointReason('ex-2', 'Ready', 'Ready');
    expect(ep.status.address).toBe('192.168.40.100');
    await waitFor('Cluster ex-2 released', async () => (await cluster('ex-2')).spec?.paused !== true, { timeoutMs: 10_000 });
    expect((await cluster('ex-2')).metadata.annotations?.[HOLD_REASON]).toBeUndefined();
    // The ClusterEndpoint and the claim are each owned by the Cluster: the garbage collector
    // deletes them in no set order, so the claim gone says nothing of the ClusterEndpoint yet.
    await waitFor(
      'the ClusterEndpoint of ex-1 gone',
      async () => (await world.objects.get(netKinds.clusterEndpoint, 'ex-1', world.ns)) === undefined,
      { timeoutMs: 30_000 },
    );
  });

  test('a missing pool keeps the Cluster held and says so on the Cluster (annotation, Event) and the ClusterEndpoint; the pool created later lets it go on', async () => {
    await createEndpointTemplate('nopool', 'vip-later');
    await createCluster('ep-nopool', 'nopool');
    const waiting = await waitEndpointReason('ep-nopool', 'AddressAllocated', 'PoolNotReady');
    expect(condition(waiting, 'AddressAllocated')?.message).toContain('vip-later');
    expect(condition(waiting, 'Ready')).toMatchObject({ status: 'False', reason: 'PoolNotReady' });
    expect(await holdReasonOf('ep-nopool', 'PoolNotReady')).toContain('vip-later');
    await waitForEvent('ep-nopool', 'PoolNotReady');
    expect(held(await cluster('ep-nopool'))).toBe(true);

    await createEndpointPool('vip-later', ['192.168.40.60']);
    const ep = await waitEndpointReason('ep-nopool', 'Ready', 'Ready');
    expect(ep.status.address).toBe('192.168.40.60');
    const c = await waitFor('Cluster ep-nopool released', async () => (held(await cluster('ep-nopool')) ? false : cluster('ep-nopool')), {
      timeoutMs: 10_000,
    });
    expect(c.metadata.annotations?.[HOLD_REASON]).toBeUndefined();
    expect(c.spec.controlPlaneEndpoint).toEqual({ host: '192.168.40.60', port: 6443 });
  });

  test('a claim no IPAM provider answers is said after a quiet moment; removing the annotation ends the hold and removes the claim and the ClusterEndpoint', async () => {
    await createEndpointTemplate('nobody', 'x', { addressFromPool: { apiGroup: 'ipam.example.com', kind: 'NobodysPool', name: 'x' } });
    await createCluster('ep-nobody', 'nobody');
    const waiting = await waitEndpointReason('ep-nobody', 'AddressAllocated', 'WaitingForAddress');
    expect(await world.objects.get(netKinds.claim, 'ep-nobody-endpoint', world.ns)).toBeDefined();
    const reason = await holdReasonOf('ep-nobody', 'WaitingForAddress', 30_000);
    expect(reason).toContain('no IPAM provider has answered');
    expect(reason).toContain('NobodysPool/x');
    expect(condition(waiting, 'Ready')?.reason).toBe('WaitingForAddress');
    await waitForEvent('ep-nobody', 'WaitingForAddress');

    await world.objects.patch(netKinds.cluster, 'ep-nobody', world.ns, { metadata: { annotations: { [TEMPLATE_ANNOTATION]: null } } });
    const c = await waitFor('Cluster ep-nobody released', async () => (held(await cluster('ep-nobody')) ? false : cluster('ep-nobody')), {
      timeoutMs: 10_000,
    });
    expect(c.spec.paused ?? false).toBe(false);
    expect(c.metadata.annotations?.[HOLD_REASON]).toBeUndefined();
    await waitFor(
      'the claim and the ClusterEndpoint of ep-nobody gone',
      async () =>
        (await world.objects.get(netKinds.claim, 'ep-nobody-endpoint', world.ns)) === undefined &&
        (await world.objects.get(netKinds.clusterEndpoint, 'ep-nobody', world.ns)) === undefined,
      { timeoutMs: 10_000 },
    );
  });

  test('an endpoint set by hand on a held Cluster ends the hold and gives up its claim: the address it waited for is left to others', async () => {
    await createEndpointPool('solo', ['192.168.40.70']);
    await createEndpointTemplate('solo', 'solo');
    await createCluster('solo-1', 'solo');
    await waitEndpointReason('solo-1', 'Ready', 'Ready');
    await createCluster('solo-2', 'solo');
    await waitEndpointReason('solo-2', 'AddressAllocated', 'PoolExhausted');
    expect(await world.objects.get(netKinds.claim, 'solo-2-endpoint', world.ns)).toBeDefined();

    await world.objects.patch(netKinds.cluster, 'solo-2', world.ns, {
      spec: { controlPlaneEndpoint: { host: '198.51.100.9', port: 6443 } },
    });
    const ep = await waitEndpointReason('solo-2', 'EndpointSet', 'EndpointAlreadySet');
    expect(condition(ep, 'EndpointSet')?.message).toContain('198.51.100.9:6443');
    const c = await waitFor('Cluster solo-2 released', async () => (held(await cluster('solo-2')) ? false : cluster('solo-2')), {
      timeoutMs: 10_000,
    });
    expect(c.spec.controlPlaneEndpoint).toEqual({ host: '198.51.100.9', port: 6443 });
    await waitFor(
      'the claim of solo-2 gone',
      async () => (await world.objects.get(netKinds.claim, 'solo-2-endpoint', world.ns)) === undefined,
      {
        timeoutMs: 10_000,
      },
    );
    // The address solo-1 gives back goes to nobody: solo-2 claims nothing any more.
    await world.objects.delete(netKinds.cluster, 'solo-1', world.ns);
    await waitFor('pool solo all free', async () => (await poolUsed('solo')) === 0, { timeoutMs: 30_000 });
    expect(await world.objects.get(netKinds.claim, 'solo-2-endpoint', world.ns)).toBeUndefined();
  });

  test('clusterctl move (pause, copy without status, unpause, delete the source): the moved Cluster is not held again and keeps its address, with no second allocation', async () => {
    // Three addresses; the first is freed before the move, so a second allocation on the target
    // would take it, not the moved one.
    await createEndpointPool('mv', ['192.168.40.200-192.168.40.202']);
    await createEndpointTemplate('mv', 'mv');
    await createCluster('mv-0', 'mv');
    await waitEndpointReason('mv-0', 'Ready', 'Ready');
    await createCluster('mv-1', 'mv');
    const source = await waitEndpointReason('mv-1', 'Ready', 'Ready');
    expect(source.status.address).toBe('192.168.40.201');
    await world.objects.delete(netKinds.cluster, 'mv-0', world.ns);
    await waitFor(
      'the claim of mv-0 gone',
      async () => (await world.objects.get(netKinds.claim, 'mv-0-endpoint', world.ns)) === undefined,
      {
        timeoutMs: 30_000,
      },
    );
    await waitFor(
      'mv-1 claim linked to its Cluster',
      async () =>
        (await world.objects.get(netKinds.claim, 'mv-1-endpoint', world.ns))?.metadata.labels?.['cluster.x-k8s.io/cluster-name'] === 'mv-1',
      { timeoutMs: 10_000 },
    );

    const target = await startTarget();
    try {
      await world.objects.patch(netKinds.cluster, 'mv-1', world.ns, { spec: { paused: true } });
      const targetFirst = await watchFirstVersions(world.kc, netKinds.cluster, target.ns);
      const pick = (kind: Kind, obj: Obj): boolean => {
        const name = obj.metadata.name ?? '';
        switch (kind.kind) {
          case 'Cluster':
          case 'ClusterEndpoint':
            return name === 'mv-1';
          case 'InClusterIPPool':
          case 'ClusterEndpointTemplate':
            return name === 'mv';
          case 'IPAddressClaim':
            return name === 'mv-1-endpoint';
          default:
            return obj.spec?.claimRef?.name === 'mv-1-endpoint';
        }
      };
      // clusterctl's order: what nothing owns, then what it owns.
      const moveKinds = [netKinds.cluster, netKinds.pool, netKinds.endpointTemplate, netKinds.clusterEndpoint, netKinds.claim, addressKind];
      const moved = await moveObjects(world.kc, world.kc, {
        namespace: world.ns,
        targetNamespace: target.ns,
        kinds: moveKinds,
        secrets: [],
        filter: pick,
      });
      expect(moved.copied).toBe(6);
      try {
        const stored = await targetFirst.of('mv-1', 10_000);
        expect(stored.spec.paused).toBe(true);
        expect(stored.metadata.annotations?.[HOLD]).toBeUndefined();
      } finally {
        targetFirst.stop();
      }
      // The target's webhook saw the Cluster and let it pass as it was: it has its endpoint.
      expect(target.logLines.some((l) => l.includes('Cluster passes') && l.includes('endpoint-set'))).toBe(true);
      await world.objects.patch(netKinds.cluster, 'mv-1', target.ns, { spec: { paused: false } });

      const moved1 = await waitFor(
        'the moved ClusterEndpoint Ready on the target',
        async () => {
          const ep = await world.objects.get(netKinds.clusterEndpoint, 'mv-1', target.ns);
          return ep !== undefined && condition(ep, 'Ready')?.status === 'True' ? ep : false;
        },
        { timeoutMs: 30_000 },
      );
      expect(moved1?.status).toMatchObject({ address: '192.168.40.201', claimName: 'mv-1-endpoint' });
      expect(moved1?.spec.virtualRouterID).toBe(source.spec.virtualRouterID);
      const targetCluster = await world.objects.get(netKinds.cluster, 'mv-1', target.ns);
      expect(targetCluster?.spec.controlPlaneEndpoint).toEqual({ host: '192.168.40.201', port: 6443 });
      expect(targetCluster?.spec.paused ?? false).toBe(false);
      const claim = await world.objects.get(netKinds.claim, 'mv-1-endpoint', target.ns);
      expect(claim?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Cluster', uid: targetCluster?.metadata.uid })]);
      const addresses = await world.objects.list(addressKind, target.ns);
      expect(addresses.map((a) => [a.metadata.name, a.spec.address])).toEqual([['mv-1-endpoint', '192.168.40.201']]);
      const pool = await waitFor(
        'the target pool counts the moved address',
        async () => {
          const p = await world.objects.get(netKinds.pool, 'mv', target.ns);
          return p?.status?.ipAddresses?.used === 1 ? p : false;
        },
        { timeoutMs: 30_000 },
      );
      expect(pool.status.ipAddresses.used).toBe(1);
      // Nothing was released in the source before clusterctl deletes it there.
      const sourceClaim = await world.objects.get(netKinds.claim, 'mv-1-endpoint', world.ns);
      expect(sourceClaim?.metadata.deletionTimestamp).toBeUndefined();
      await waitPoolUsed(world, 'mv', 1);

      await deleteMovedObjects(world.kc, { namespace: world.ns, kinds: moveKinds, secrets: [], filter: pick });
      await waitFor('the source Cluster gone', async () => (await world.objects.get(netKinds.cluster, 'mv-1', world.ns)) === undefined, {
        timeoutMs: 10_000,
      });
      await staysTrue(
        'the target keeps its claim, address and allocation',
        async () =>
          (await world.objects.get(addressKind, 'mv-1-endpoint', target.ns))?.spec.address === '192.168.40.201' &&
          (await world.objects.get(netKinds.pool, 'mv', target.ns))?.status?.ipAddresses?.used === 1,
        3_000,
      );
    } finally {
      await target.stop();
    }
  });

  test('a claim name taken by a claim that is not the Cluster’s keeps it held with ClaimConflict; once that claim is gone it goes on', async () => {
    await world.objects.create(netKinds.claim, {
      metadata: { name: 'ep-cf-endpoint', namespace: world.ns },
      spec: { poolRef: poolRef('vip') },
    });
    await createCluster('ep-cf', 'vip');
    const waiting = await waitEndpointReason('ep-cf', 'AddressAllocated', 'ClaimConflict');
    expect(condition(waiting, 'Ready')?.reason).toBe('ClaimConflict');
    expect(await holdReasonOf('ep-cf', 'ClaimConflict')).toContain('ep-cf-endpoint');
    await waitForEvent('ep-cf', 'ClaimConflict');
    expect(held(await cluster('ep-cf'))).toBe(true);

    await world.objects.delete(netKinds.claim, 'ep-cf-endpoint', world.ns);
    const ep = await waitEndpointReason('ep-cf', 'Ready', 'Ready');
    const c = await waitFor('Cluster ep-cf released', async () => (held(await cluster('ep-cf')) ? false : cluster('ep-cf')), {
      timeoutMs: 10_000,
    });
    expect(c.spec.controlPlaneEndpoint.host).toBe(ep.status.address);
    const claim = await world.objects.get(netKinds.claim, 'ep-cf-endpoint', world.ns);
    expect(claim?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Cluster', uid: c.metadata.uid })]);
  });

  test('a claim the API server refuses keeps the Cluster held with ClaimRefused and its message; once the refusal is lifted it goes on', async () => {
    const refusal = await refuseClaim('ep-refused-endpoint', 'endpoint claims are refused here until the policy goes');
    try {
      await createEndpointPool('refused', ['192.168.40.80']);
      await createEndpointTemplate('refused', 'refused');
      await createCluster('ep-refused', 'refused');
      const waiting = await waitEndpointReason('ep-refused', 'AddressAllocated', 'ClaimRefused');
      expect(condition(waiting, 'AddressAllocated')?.message).toContain('endpoint claims are refused here until the policy goes');
      expect(condition(waiting, 'Ready')?.reason).toBe('ClaimRefused');
      const reason = await holdReasonOf('ep-refused', 'ClaimRefused');
      expect(reason).toContain('ep-refused-endpoint');
      expect(reason).toContain(`ValidatingAdmissionPolicy '${refusal.name}'`);
      expect(reason).toContain('endpoint claims are refused here until the policy goes');
      await waitForEvent('ep-refused', 'ClaimRefused');
      const event = eventsOf(world, 'ep-refused').find((e) => e.reason === 'ClaimRefused');
      expect(event?.type).toBe('Warning');
      expect(event?.message).toContain('endpoint claims are refused here until the policy goes');
      expect(held(await cluster('ep-refused'))).toBe(true);
      expect(await world.objects.get(netKinds.claim, 'ep-refused-endpoint', world.ns)).toBeUndefined();
    } finally {
      await refusal.lift();
    }
    const ep = await waitEndpointReason('ep-refused', 'Ready', 'Ready', 60_000);
    const c = await waitFor(
      'Cluster ep-refused released',
      async () => (held(await cluster('ep-refused')) ? false : cluster('ep-refused')),
      {
        timeoutMs: 10_000,
      },
    );
    expect(ep.status.address).toBe('192.168.40.80');
    expect(c.spec.controlPlaneEndpoint).toEqual({ host: '192.168.40.80', port: 6443 });
    expect(c.metadata.annotations?.[HOLD_REASON]).toBeUndefined();
    const claim = await world.objects.get(netKinds.claim, 'ep-refused-endpoint', world.ns);
    expect(claim?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Cluster', uid: c.metadata.uid, controller: true })]);
  });

  test('the annotation removed from a Cluster that runs on its claimed address: the claim and the ClusterEndpoint stay, and say why', async () => {
    await createCluster('ep-keep', 'vip');
    const ready = await waitEndpointReason('ep-keep', 'Ready', 'Ready');
    await world.objects.patch(netKinds.cluster, 'ep-keep', world.ns, { metadata: { annotations: { [TEMPLATE_ANNOTATION]: null } } });
    // The controller saw the unlinking: it says so on the ClusterEndpoint.
    const kept = await waitEndpointReason('ep-keep', 'Ready', 'Unlinked');
    expect(condition(kept, 'Ready')?.message).toContain(ready.status.address as string);
    const claim = await world.objects.get(netKinds.claim, 'ep-keep-endpoint', world.ns);
    expect(claim?.metadata.deletionTimestamp).toBeUndefined();
    expect((await cluster('ep-keep')).spec.controlPlaneEndpoint.host).toBe(ready.status.address);
  });

  test('a control-plane machine waits for its Cluster endpoint, then carries the VIP announcer; a worker carries none', async () => {
    await createVlans(world, [1000, 1001]);
    await createPool(world, 'vlan-1000', 10);
    await createPool(world, 'vlan-1001', 11);
    await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }]);
    await createTemplate(world, 'hb-1001', [{ name: 'bond0', vlans: [{ vxlan: 1001, addressesFromPools: [poolRef('vlan-1001')] }] }]);
    // The world's Cluster, linked after its creation (so not held) to a template that does not exist yet.
    await world.objects.patch(netKinds.cluster, CLUSTER, world.ns, { metadata: { annotations: { [TEMPLATE_ANNOTATION]: 'cp-vip' } } });
    await createMachine(world, 'cp-0', 'hb', { controlPlane: true });
    await createMachine(world, 'wk-0', 'hb');
    await waitMachineNetworkReason(world, 'cp-0', { type: 'UserDataInjected', reason: 'WaitingForEndpoint' });
    // The worker goes on meanwhile, with nothing of the announcer.
    await waitMachineNetworkReady(world, 'wk-0');
    expect(await injectedText(world, 'wk-0')).not.toContain('keepalived');

    // The VIP on VLAN 1000's subnet, from its own pool.
    await createEndpointPool('cp-vip', ['192.168.10.250'], '192.168.10.1');
    await createEndpointTemplate('cp-vip', 'cp-vip', { virtualRouterID: 77 });
    await waitMachineNetworkReady(world, 'cp-0');
    const injected = await injectedText(world, 'cp-0');
    expect(injected).toContain('systemctl enable keepalived');
    expect(injected).toMatch(/virtual_router_id 77/);
    expect(injected).toContain('192.168.10.250/24');
    expect((await cluster(CLUSTER)).spec.controlPlaneEndpoint).toEqual({ host: '192.168.10.250', port: 6443 });

    // A control plane whose template does not carry the endpoint's VLAN is told so.
    await createMachine(world, 'cp-x', 'hb-1001', { controlPlane: true });
    const refused = await waitMachineNetworkReason(world, 'cp-x', { type: 'UserDataInjected', reason: 'EndpointVLANNotOnMachine' });
    expect(condition(refused, 'UserDataInjected')?.message).toContain('1000');
  });

  test('a control-plane machine of a Cluster created with an endpoint of its own (EndpointAlreadySet) gets no VIP announcer and does not wait for one', async () => {
    // A second workload cluster, linked and given the user's endpoint at creation, before we could claim one.
    await provisionLinkedCluster('own', 'cp-vip', { host: '203.0.113.30', port: 6443 });
    // The controller saw it: the ClusterEndpoint says it runs with the user's endpoint.
    const ep = await waitEndpointReason('own', 'EndpointSet', 'EndpointAlreadySet');
    expect(condition(ep, 'EndpointSet')?.message).toContain('203.0.113.30:6443');
    expect(ep.status.address).toBeUndefined();
    expect(held(await cluster('own'))).toBe(false);

    await createMachine(world, 'own-cp-0', 'hb', { controlPlane: true, cluster: 'own' });
    const ready = await waitMachineNetworkReady(world, 'own-cp-0');
    expect(condition(ready, 'UserDataInjected')).toMatchObject({ status: 'True' });
    const injected = await injectedText(world, 'own-cp-0');
    expect(injected).not.toContain('keepalived');
    expect(injected).not.toContain('203.0.113.30');
    expect((await cluster('own')).spec.controlPlaneEndpoint).toEqual({ host: '203.0.113.30', port: 6443 });
    expect(await world.objects.get(netKinds.claim, 'own-endpoint', world.ns)).toBeUndefined();
  });
});

/**
 * Makes the API server refuse to create the claim of this name in the test namespace: a
 * ValidatingAdmissionPolicy and its binding, effective once a dry-run create is refused.
 */
async function refuseClaim(claimName: string, message: string): Promise<{ name: string; lift(): Promise<void> }> {
  const admission = world.kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  const name = `refuse-${world.ns}-${claimName}`;
  const lift = async (): Promise<void> => {
    await admission.deleteValidatingAdmissionPolicyBinding({ name }).catch(() => undefined);
    await admission.deleteValidatingAdmissionPolicy({ name }).catch(() => undefined);
  };
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            { apiGroups: ['ipam.cluster.x-k8s.io'], apiVersions: ['*'], operations: ['CREATE'], resources: ['ipaddressclaims'] },
          ],
        },
        validations: [{ expression: `object.metadata.name != '${claimName}'`, message }],
      },
    },
  });
  await admission.createValidatingAdmissionPolicyBinding({
    body: {
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': world.ns } } },
      },
    },
  });
  const probe = world.kc.makeApiClient(k8s.CustomObjectsApi);
  await waitFor(
    `the API server refusing IPAddressClaim ${claimName}`,
    async () => {
      try {
        await probe.createNamespacedCustomObject({
          group: netKinds.claim.group,
          version: netKinds.claim.version,
          plural: netKinds.claim.plural,
          namespace: world.ns,
          dryRun: 'All',
          body: {
            apiVersion: `${netKinds.claim.group}/${netKinds.claim.version}`,
            kind: 'IPAddressClaim',
            metadata: { name: claimName, namespace: world.ns },
            spec: { poolRef: poolRef('vip') },
          },
        });
        return false;
      } catch (err: unknown) {
        return String(err).includes(message);
      }
    },
    { timeoutMs: 10_000 },
  );
  return { name, lift };
}

/**
 * A second management "cluster" for the move: another namespace of this control plane with its
 * own IPAM provider and network controller (each watching only it) and our Cluster webhook there.
 */
async function startTarget(): Promise<{ ns: string; logLines: string[]; stop(): Promise<void> }> {
  const ns = await createTestNamespace(world.kc, 'net-endpoint-target');
  const logLines: string[] = [];
  const certs = await makeServingCertificate();
  const core = world.kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: CREDENTIALS_SECRET }, stringData: { apiToken: TOKEN } } });
  let ipam: RunningIpamController | undefined;
  let network: RunningNetworkController | undefined;
  const webhookName = `metal-l2-move-target-${ns}`;
  const admission = world.kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  const stop = async (): Promise<void> => {
    // The moved Cluster goes while the target's controllers still run: its claim's finalizer is released.
    for (const c of await world.objects.list(netKinds.cluster, ns)) await world.objects.delete(netKinds.cluster, c.metadata.name ?? '', ns);
    await waitFor('the target namespace without claims', async () => (await world.objects.list(netKinds.claim, ns)).length === 0, {
      timeoutMs: 30_000,
    }).catch(() => undefined);
    await admission.deleteMutatingWebhookConfiguration({ name: webhookName }).catch(() => undefined);
    await network?.stop();
    await ipam?.stop();
    await deleteTestNamespace(world.kc, ns);
  };
  try {
    ipam = await startIpamController({
      kubeConfig: world.kc,
      namespace: ns,
      logger: createLogger({ level: 'error', silent: true }),
      leaderElection: false,
      concurrency: 2,
    });
    network = await startNetworkController({
      kubeConfig: world.kc,
      namespace: ns,
      logger: linesLogger(logLines),
      concurrency: 2,
      webhook: { port: 0, certDir: certs.certDir, host: '127.0.0.1' },
      metal: { baseUrl: world.sim.baseUrl, rateLimit: false, retry: { baseDelayMs: 50, maxDelayMs: 1_000 } },
      defaultCredentials: { namespace: ns, name: CREDENTIALS_SECRET },
      metadataUrl: `${world.sim.url}/metadata`,
      timings: FAST_TIMINGS,
    });
    await admission.createMutatingWebhookConfiguration({
      body: {
        metadata: { name: webhookName },
        webhooks: [
          {
            name: `cluster.${ns}.network.metal.x-k8s.io`,
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            failurePolicy: 'Fail',
            timeoutSeconds: 10,
            clientConfig: { url: `https://127.0.0.1:${network.webhookPort}/mutate-cluster-x-k8s-io-cluster`, caBundle: certs.caBundle },
            rules: [{ apiGroups: ['cluster.x-k8s.io'], apiVersions: ['*'], operations: ['CREATE'], resources: ['clusters'] }],
            matchConditions: [
              {
                name: 'endpoint-template',
                expression: "has(object.metadata.annotations) && 'network.metal.x-k8s.io/endpoint-template' in object.metadata.annotations",
              },
            ],
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
          },
        ],
      },
    });
  } catch (err: unknown) {
    await stop();
    throw err;
  }
  return { ns, logLines, stop };
}
