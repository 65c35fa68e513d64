import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Obj } from '@metal-l2/test-support/objects';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { watchFirstVersions, type FirstVersions } from './support/first-versions.js';
import * as k8s from '@kubernetes/client-node';
import {
  CLUSTER,
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

const TEMPLATE_ANNOTATION = 'network.metal.x-k8s.io/endpoint-template';
const HOLD = 'network.metal.x-k8s.io/endpoint-hold';
const HOLD_REASON = 'network.metal.x-k8s.io/endpoint-hold-reason';

let firstVersions: FirstVersions | undefined;

beforeAll(async () => {
  firstVersions = await watchFirstVersions(world.kc, netKinds.cluster, world.ns);
});

afterAll(() => firstVersions?.stop());

async function createEndpointPool(name: string, addresses: string[], gateway = '192.168.40.1'): Promise<void> {
  await world.objects.create(netKinds.pool, {
    metadata: { name, namespace: world.ns },
    spec: { addresses, prefix: 24, gateway },
  });
}

async function createEndpointTemplate(name: string, pool: string, extra: Record<string, unknown> = {}): Promise<void> {
  await world.objects.create(netKinds.endpointTemplate, {
    metadata: { name, namespace: world.ns },
    spec: { vxlan: 1000, addressFromPool: poolRef(pool), ...extra },
  });
}

async function createCluster(name: string, template: string, endpoint?: { host: string; port: number }): Promise<Obj> {
  return world.objects.create(netKinds.cluster, {
    metadata: { name, namespace: world.ns, annotations: { [TEMPLATE_ANNOTATION]: template } },
    spec: {
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'PacketCluster', name },
      ...(endpoint === undefined ? {} : { controlPlaneEndpoint: endpoint }),
    },
  });
}

async function cluster(name: string): Promise<Obj> {
  const c = await world.objects.get(netKinds.cluster, name, world.ns);
  if (c === undefined) throw new Error(`Cluster ${name} not found`);
  return c;
}

async function waitEndpointReason(name: string, type: string, reason: string, timeoutMs = 30_000): Promise<Obj> {
  return waitFor(
    `ClusterEndpoint ${name} ${type} ${reason}`,
    async () => {
      const ep = await world.objects.get(netKinds.clusterEndpoint, name, world.ns);
      if (ep !== undefined && condition(ep, type)?.reason === reason) return ep;
      throw new Error(ep === undefined ? 'no ClusterEndpoint' : JSON.stringify(ep.status ?? 'no status'));
    },
    { timeoutMs, intervalMs: 200 },
  );
}

async function poolUsed(name: string): Promise<number | undefined> {
  const pool = await world.objects.get(netKinds.pool, name, world.ns);
  return pool?.status?.ipAddresses?.used as number | undefined;
}

function held(c: Obj): boolean {
  return c.spec?.paused === true && c.metadata.annotations?.[HOLD] !== undefined;
}

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

    // The claim is the Cluster's (controller owner) and not linked to it by name: a provider
    // leaves the claims of a paused Cluster alone, and this one is paused until the address is there.
    const claim = await world.objects.get(netKinds.claim, 'ep-a-endpoint', world.ns);
    expect(claim?.spec).toEqual({ poolRef: poolRef('vip') });
    expect(claim?.metadata.labels?.['cluster.x-k8s.io/cluster-name']).toBeUndefined();
    expect(claim?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Cluster', uid: c.metadata.uid, controller: true })]);
    expect(ep.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Cluster', uid: c.metadata.uid, controller: true })]);
  });

  test('a Cluster created with another endpoint (clusterctl move, a hand-set one) is never held nor overwritten: EndpointAlreadySet', async () => {
    await createEndpointTemplate('vip-port', 'vip', { port: 8443, virtualRouterID: 42 });
    await createCluster('ep-set', 'vip-port', { host: '203.0.113.7', port: 6443 });
    const first = await (firstVersions as FirstVersions).of('ep-set', 10_000);
    expect(first.spec?.paused ?? false).toBe(false);
    expect(first.metadata.annotations?.[HOLD]).toBeUndefined();

    // The controller saw it: it claimed an address and says why it did not write it.
    const ep = await waitEndpointReason('ep-set', 'EndpointSet', 'EndpointAlreadySet');
    const message = condition(ep, 'EndpointSet')?.message ?? '';
    expect(message).toContain('203.0.113.7:6443');
    expect(message).toContain(`${ep.status.address as string}:8443`);
    expect(condition(ep, 'Ready')).toMatchObject({ status: 'False', reason: 'EndpointAlreadySet' });
    expect(ep.status.virtualRouterID).toBe(42);
    const c = await cluster('ep-set');
    expect(c.spec.controlPlaneEndpoint).toEqual({ host: '203.0.113.7', port: 6443 });
    expect(c.spec.paused ?? false).toBe(false);
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
    expect(await poolUsed('one')).toBe(1);
    await createCluster('ex-2', 'one');
    const waiting = await waitEndpointReason('ex-2', 'AddressAllocated', 'PoolExhausted');
    expect(condition(waiting, 'Ready')).toMatchObject({ status: 'False', reason: 'PoolExhausted' });
    expect(held(await cluster('ex-2'))).toBe(true);

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
    expect(await world.objects.get(netKinds.clusterEndpoint, 'ex-1', world.ns)).toBeUndefined();
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
    expect(await injectedText('wk-0')).not.toContain('keepalived');

    // The VIP on VLAN 1000's subnet, from its own pool.
    await createEndpointPool('cp-vip', ['192.168.10.250'], '192.168.10.1');
    await createEndpointTemplate('cp-vip', 'cp-vip', { virtualRouterID: 77 });
    await waitMachineNetworkReady(world, 'cp-0');
    const injected = await injectedText('cp-0');
    expect(injected).toContain('systemctl enable keepalived');
    expect(injected).toMatch(/virtual_router_id 77/);
    expect(injected).toContain('192.168.10.250/24');
    expect((await cluster(CLUSTER)).spec.controlPlaneEndpoint).toEqual({ host: '192.168.10.250', port: 6443 });

    // A control plane whose template does not carry the endpoint's VLAN is told so.
    await createMachine(world, 'cp-x', 'hb-1001', { controlPlane: true });
    const refused = await waitMachineNetworkReason(world, 'cp-x', { type: 'UserDataInjected', reason: 'EndpointVLANNotOnMachine' });
    expect(condition(refused, 'UserDataInjected')?.message).toContain('1000');
  });
});

/** The bootstrap data of a machine as the controller left it, with every base64 file content decoded beside it. */
async function injectedText(machine: string): Promise<string> {
  const secret = await world.kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ namespace: world.ns, name: `${machine}-bootstrap` });
  const value = Buffer.from(secret.data?.['value'] ?? '', 'base64').toString('utf8');
  const decoded = [...value.matchAll(/content: ([A-Za-z0-9+/=]+)$/gm)].map((m) => Buffer.from(m[1] ?? '', 'base64').toString('utf8'));
  return [value, ...decoded].join('\n');
}
