import { describe, expect, test } from '@jest/globals';
import { claimObject, readyCondition } from '@metal-l2/test-support/objects';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { HOLD_REASON, TEMPLATE_ANNOTATION, addressKind, clusterEndpoints, held } from './support/cluster-endpoints.js';
import { waitPoolUsed } from './support/network-probes.js';
import { injectedText } from './support/vip-cluster.js';
import {
  condition,
  createHybridBondedTemplate,
  createMachine,
  machineNetwork,
  netKinds,
  onFirstUse,
  useNetworkWorld,
  waitMachineNetworkReady,
} from './support/network-world.js';

// Day two of a Cluster on a pool endpoint (issue 29, items 2 and 3): the address (VIP) stays
// claimed while it is in use, the Cluster's endpoint or announced by a control plane that was
// given the announcer, whatever the user does to the Cluster or the claim, and the ClusterEndpoint
// says what gives it back. Real API server, our webhook, our IPAM provider, the garbage
// collector, the CAPP fixture creating devices and the network controller injecting user data.

const world = useNetworkWorld('net-ep-in-use');
const endpoints = clusterEndpoints(world);
const { cluster, createCluster, eventReasons, waitEndpointReason } = endpoints;

const FINALIZER = 'network.metal.x-k8s.io/endpoint-in-use';

/** VLAN 1000 with its pool and the hybrid-bonded template hb the control planes use (the VIPs live on 192.168.10.0/24). */
const setup = onFirstUse(() => createHybridBondedTemplate(world));

/**
 * A Cluster `name` running on the one address `vip` of its own pool and template, with one
 * control-plane machine `<name>-cp-0` whose injected user data announces it.
 */
async function runningCluster(name: string, vip: string): Promise<void> {
  await setup();
  await endpoints.createEndpointPool(name, [vip], '192.168.10.1');
  await endpoints.createEndpointTemplate(name, name);
  await endpoints.provisionLinkedCluster(name, name);
  const ep = await waitEndpointReason(name, 'Ready', 'Ready');
  expect(ep.status.address).toBe(vip);
  await createMachine(world, `${name}-cp-0`, 'hb', { controlPlane: true, cluster: name });
  await waitMachineNetworkReady(world, `${name}-cp-0`);
  expect(await injectedText(world, `${name}-cp-0`)).toContain(`${vip}/24`);
}

const claim = (name: string) => world.objects.get(netKinds.claim, name, world.ns);

/** A machine gone as CAPI deletes one: the PacketMachine (CAPP deletes the device), then its MachineNetwork with it. */
async function deleteMachine(name: string): Promise<void> {
  await world.objects.delete(netKinds.packetMachine, name, world.ns);
  await world.objects.delete(netKinds.machine, name, world.ns);
  await waitFor(`MachineNetwork ${name} gone`, async () => (await machineNetwork(world, name)) === undefined, { timeoutMs: 60_000 });
}

/** A claim of no Cluster on the pool, created now and answered PoolExhausted: proof the IPAM provider decided the pool after what came before. */
async function exhaustedSentinel(pool: string, name: string): Promise<void> {
  await world.objects.create(netKinds.claim, claimObject(name, world.ns, { pool }));
  await waitFor(`${name} PoolExhausted`, async () => readyCondition(await claim(name))?.reason === 'PoolExhausted', { timeoutMs: 30_000 });
}

describe('a Cluster endpoint address in use is never handed to another Cluster', () => {
  test("the Cluster's endpoint patched to another host while a control plane announces the VIP: a second Cluster on the one-address pool waits, the first says what gives the VIP back; the announcing machine gone, the second gets it", async () => {
    await runningCluster('e1', '192.168.10.250');
    await world.objects.patch(netKinds.cluster, 'e1', world.ns, {
      spec: { controlPlaneEndpoint: { host: 'api.example.com', port: 6443 } },
    });
    await waitEndpointReason('e1', 'EndpointSet', 'EndpointAlreadySet');

    await createCluster('e2', 'e1');
    const waiting = await waitEndpointReason('e2', 'AddressAllocated', 'PoolExhausted');
    expect(waiting.status.address).toBeUndefined();
    expect(held(await cluster('e2'))).toBe(true);
    expect((await world.objects.get(addressKind, 'e1-endpoint', world.ns))?.spec.address).toBe('192.168.10.250');

    const kept = await waitEndpointReason('e1', 'Ready', 'AddressInUse');
    expect(kept.status.address).toBe('192.168.10.250');
    expect(condition(kept, 'AddressAllocated')).toMatchObject({ status: 'True', reason: 'AddressInUse' });
    const message = condition(kept, 'Ready')?.message ?? '';
    expect(message).toContain('api.example.com:6443');
    expect(message).toContain('e1-cp-0');
    expect(message).toContain('roll out the control plane');
    expect(message).toContain('delete the Cluster');
    expect(eventReasons('e1')).toContain('AddressInUse');
    expect((await claim('e1-endpoint'))?.metadata.deletionTimestamp).toBeUndefined();

    await deleteMachine('e1-cp-0');
    const taken = await waitEndpointReason('e2', 'Ready', 'Ready', 60_000);
    expect(taken.status.address).toBe('192.168.10.250');
    const gaveUp = await waitEndpointReason('e1', 'Ready', 'EndpointAlreadySet');
    expect(gaveUp.status.address).toBeUndefined();
    expect(await claim('e1-endpoint')).toBeUndefined();
    expect((await cluster('e1')).spec.controlPlaneEndpoint).toEqual({ host: 'api.example.com', port: 6443 });
  });

  test('kubectl delete of the endpoint claim of a running Cluster: the claim is kept, its address never goes to another claim, no EndpointAlreadySet; deleting the Cluster gives it back', async () => {
    await runningCluster('e3', '192.168.10.251');
    await createCluster('e4', 'e3');
    await waitEndpointReason('e4', 'AddressAllocated', 'PoolExhausted');

    await world.objects.delete(netKinds.claim, 'e3-endpoint', world.ns);
    const kept = await waitEndpointReason('e3', 'Ready', 'AddressInUse');
    const message = condition(kept, 'Ready')?.message ?? '';
    expect(message).toContain('IPAddressClaim e3-endpoint was deleted');
    expect(message).toContain("the Cluster's control-plane endpoint");
    expect(message).toContain('e3-cp-0');
    expect(condition(kept, 'EndpointSet')).toMatchObject({ status: 'True', reason: 'EndpointSet' });
    await exhaustedSentinel('e3', 'e3-sentinel');
    const deleting = await claim('e3-endpoint');
    expect(deleting?.metadata.deletionTimestamp).toBeDefined();
    expect(deleting?.metadata.finalizers).toEqual(expect.arrayContaining([FINALIZER, 'ipam.metal.x-k8s.io/release-address']));
    expect((await world.objects.get(addressKind, 'e3-endpoint', world.ns))?.spec.address).toBe('192.168.10.251');
    expect((await claim('e4-endpoint'))?.status?.addressRef).toBeUndefined();
    expect(eventReasons('e3')).not.toContain('EndpointAlreadySet');
    expect((await cluster('e3')).spec.controlPlaneEndpoint).toEqual({ host: '192.168.10.251', port: 6443 });

    // What the ClusterEndpoint advises: the Cluster deleted (CAPI deletes its machines first).
    await world.objects.delete(netKinds.claim, 'e3-sentinel', world.ns);
    await deleteMachine('e3-cp-0');
    await world.objects.delete(netKinds.cluster, 'e3', world.ns);
    const taken = await waitEndpointReason('e4', 'Ready', 'Ready', 60_000);
    expect(taken.status.address).toBe('192.168.10.251');
    expect(await claim('e3-endpoint')).toBeUndefined();
  });

  test('the endpoint-template annotation removed from a Cluster that moved to another endpoint while a control plane announces the VIP: the claim stays until the machine is gone', async () => {
    await runningCluster('e5', '192.168.10.252');
    await world.objects.patch(netKinds.cluster, 'e5', world.ns, {
      spec: { controlPlaneEndpoint: { host: 'api5.example.com', port: 6443 } },
    });
    await waitEndpointReason('e5', 'Ready', 'AddressInUse');
    await world.objects.patch(netKinds.cluster, 'e5', world.ns, { metadata: { annotations: { [TEMPLATE_ANNOTATION]: null } } });
    // The controller saw the unlinking: the ClusterEndpoint says why the address stays.
    const kept = await waitFor(
      'the ClusterEndpoint of e5 saying it is unlinked and still announced',
      async () => {
        const ep = await world.objects.get(netKinds.clusterEndpoint, 'e5', world.ns);
        const ready = condition(ep, 'Ready');
        return ready?.reason === 'AddressInUse' && ready.message?.includes('links no ClusterEndpointTemplate any more') === true
          ? ready
          : false;
      },
      { timeoutMs: 30_000 },
    );
    expect(kept.message).toContain('e5-cp-0');
    await exhaustedSentinel('e5', 'e5-sentinel');
    expect((await claim('e5-endpoint'))?.metadata.deletionTimestamp).toBeUndefined();

    await deleteMachine('e5-cp-0');
    await waitFor(
      'the claim and the ClusterEndpoint of e5 gone',
      async () =>
        (await claim('e5-endpoint')) === undefined && (await world.objects.get(netKinds.clusterEndpoint, 'e5', world.ns)) === undefined,
      { timeoutMs: 30_000 },
    );
    await waitFor('the sentinel given the address', async () => readyCondition(await claim('e5-sentinel'))?.status === 'True', {
      timeoutMs: 30_000,
    });
  });
});

describe('a Cluster deleted and created again with the same name', () => {
  test("while its old claim is terminating: the new Cluster waits for the former Cluster's claim (no ClaimConflict), which goes, then gets a fresh claim and its endpoint", async () => {
    await endpoints.createEndpointPool('again', ['192.168.40.150']);
    await endpoints.createEndpointTemplate('again', 'again');
    const former = await createCluster('again', 'again');
    await waitEndpointReason('again', 'Ready', 'Ready');

    // The IPAM provider down while the Cluster is deleted and created again: the old claim stays terminating.
    await world.stopIpamController();
    try {
      await world.objects.delete(netKinds.cluster, 'again', world.ns);
      await waitFor(
        'the old claim terminating and the old ClusterEndpoint gone',
        async () =>
          (await claim('again-endpoint'))?.metadata.deletionTimestamp !== undefined &&
          (await world.objects.get(netKinds.clusterEndpoint, 'again', world.ns)) === undefined,
        { timeoutMs: 30_000 },
      );
      const created = await createCluster('again', 'again');
      expect(created.metadata.uid).not.toBe(former.metadata.uid);
      const waiting = await waitEndpointReason('again', 'AddressAllocated', 'WaitingForFormerClaim');
      expect(condition(waiting, 'AddressAllocated')?.message).toContain(former.metadata.uid);
      expect(await endpoints.holdReasonOf('again', 'WaitingForFormerClaim')).toContain('again-endpoint');
    } finally {
      await world.startIpamController();
    }

    const ep = await waitEndpointReason('again', 'Ready', 'Ready', 60_000);
    expect(ep.status.address).toBe('192.168.40.150');
    const c = await waitFor('the new Cluster released', async () => (held(await cluster('again')) ? false : cluster('again')), {
      timeoutMs: 10_000,
    });
    expect(c.spec.controlPlaneEndpoint).toEqual({ host: '192.168.40.150', port: 6443 });
    expect(c.metadata.annotations?.[HOLD_REASON]).toBeUndefined();
    const fresh = await claim('again-endpoint');
    expect(fresh?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Cluster', uid: c.metadata.uid })]);
    expect(eventReasons('again')).not.toContain('ClaimConflict');
    await waitPoolUsed(world, 'again', 1);
  });
});
