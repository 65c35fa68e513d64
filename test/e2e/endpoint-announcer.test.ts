import { afterAll, describe, expect, test } from '@jest/globals';
import type { Obj } from '@metal-l2/test-support/objects';
import { testTimeout } from '@metal-l2/test-support/timeouts';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
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
} from './support/network-world.js';
import { ENDPOINT_TEMPLATE_ANNOTATION, injectedText, linkClusterToVip } from './support/vip-cluster.js';
import { conditionFlips, watchNamespaceFromNow, type CollectionWatch } from './support/watch-versions.js';

// A control plane keeps getting the VIP announcer while its Cluster runs on its ClusterEndpoint's
// address (issue 29): removing the endpoint-template annotation or an EndpointAlreadySet transition
// neither takes it from new control planes nor flips the provisioned ones, which keep announcing
// what they booted with. An endpoint that is no longer ours gives new machines none, and still
// flips no provisioned one.

const world = useNetworkWorld('net-announcer');

const VIP = '192.168.10.240';
const ANNOUNCED = { address: VIP, prefix: 24, port: 6443, vxlan: 1000, virtualRouterID: 61 };

let machineNetworks: CollectionWatch | undefined;
afterAll(() => machineNetworks?.stop());

/** Waits until the ClusterEndpoint's condition `type` has `reason` (and a message with `saying`). */
async function endpointReason(type: string, reason: string, saying = ''): Promise<Obj> {
  return waitFor(
    `ClusterEndpoint ${CLUSTER} ${type} ${reason}`,
    async () => {
      const ep = await world.objects.get(netKinds.clusterEndpoint, CLUSTER, world.ns);
      const c = condition(ep, type);
      if (ep !== undefined && c?.reason === reason && c.message?.includes(saying) === true) return ep;
      throw new Error(JSON.stringify(ep?.status ?? 'no ClusterEndpoint'));
    },
    { timeoutMs: 30_000 },
  );
}

/** How many reconciles of a machine's network the controller finished since `mark` (an index into its log). */
function reconcilesOf(name: string, mark: number): number {
  return world.logLines
    .slice(mark)
    .filter((l) => l.includes('"controller":"machinenetwork"') && l.includes(`"name":"${name}"`) && l.includes('"msg":"reconciled')).length;
}

/** A new control plane, Ready; whether its user data announces the VIP and what its status records. */
async function newControlPlane(name: string): Promise<{ announces: boolean; recorded: unknown }> {
  await createMachine(world, name, 'hb', { controlPlane: true });
  const mn = await waitMachineNetworkReady(world, name, 60_000);
  const text = await injectedText(world, name);
  return {
    announces: text.includes('systemctl enable keepalived') && text.includes(`${VIP}/24`),
    recorded: mn.status?.userData?.announcedEndpoint,
  };
}

/** Every provisioned control plane was reconciled since `mark`: it saw the change, and none of them flipped. */
async function expectNoFlip(names: readonly string[], mark: number): Promise<void> {
  for (const name of names)
    await waitFor(`a reconcile of ${name} since the change`, () => reconcilesOf(name, mark) > 0, { timeoutMs: 30_000 });
  // cp-0 was Ready before the watch began; the others became Ready while it watched.
  const flips = (): string[] => conditionFlips(machineNetworks as CollectionWatch, ['Ready', 'UserDataInjected'], { settled: ['cp-0'] });
  expect(flips()).toEqual([]);
  await staysTrue('no provisioned control plane flips', () => flips().length === 0, 2_000);
  for (const name of names) {
    const mn = await world.objects.get(netKinds.machineNetwork, name, world.ns);
    expect(condition(mn, 'UserDataInjected')).toMatchObject({ status: 'True', reason: 'Injected' });
    expect(mn?.status?.userData?.announcedEndpoint).toEqual(ANNOUNCED);
  }
}

describe('the VIP announcer while the Cluster runs on its endpoint', () => {
  test(
    'removing the endpoint-template annotation, then an EndpointAlreadySet transition: provisioned control planes never flip and new ones still announce the VIP; an endpoint no longer ours flips none',
    async () => {
      await createVlans(world, [1000]);
      await createPool(world, 'vlan-1000', 10);
      await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }]);
      await linkClusterToVip(world, { vip: VIP, virtualRouterID: ANNOUNCED.virtualRouterID });
      expect(await newControlPlane('cp-0')).toEqual({ announces: true, recorded: ANNOUNCED });
      machineNetworks = await watchNamespaceFromNow(world.kc, netKinds.machineNetwork, world.ns);

      // The annotation removed: the claim and the ClusterEndpoint stay (the Cluster runs on the VIP).
      let mark = world.logLines.length;
      await world.objects.patch(netKinds.cluster, CLUSTER, world.ns, {
        metadata: { annotations: { [ENDPOINT_TEMPLATE_ANNOTATION]: null } },
      });
      await endpointReason('Ready', 'Unlinked');
      await expectNoFlip(['cp-0'], mark);
      expect(await newControlPlane('cp-1')).toEqual({ announces: true, recorded: ANNOUNCED });

      // Linked again, then the Cluster's port changed by hand: EndpointAlreadySet, on the same VIP.
      await world.objects.patch(netKinds.cluster, CLUSTER, world.ns, {
        metadata: { annotations: { [ENDPOINT_TEMPLATE_ANNOTATION]: 'cp-vip' } },
      });
      await endpointReason('Ready', 'Ready');
      mark = world.logLines.length;
      await world.objects.patch(netKinds.cluster, CLUSTER, world.ns, { spec: { controlPlaneEndpoint: { host: VIP, port: 7443 } } });
      await endpointReason('EndpointSet', 'EndpointAlreadySet');
      await expectNoFlip(['cp-0', 'cp-1'], mark);
      expect(await newControlPlane('cp-2')).toEqual({ announces: true, recorded: ANNOUNCED });

      // The Cluster moved to an endpoint that is not ours: new control planes get no announcer, and
      // the ones that announce the VIP keep saying what they booted with.
      mark = world.logLines.length;
      await world.objects.patch(netKinds.cluster, CLUSTER, world.ns, {
        spec: { controlPlaneEndpoint: { host: 'api.example.com', port: 6443 } },
      });
      await endpointReason('EndpointSet', 'EndpointAlreadySet', 'api.example.com');
      await expectNoFlip(['cp-0', 'cp-1', 'cp-2'], mark);
      expect(await newControlPlane('cp-3')).toEqual({ announces: false, recorded: undefined });
    },
    testTimeout(240_000),
  );
});
