import { beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { NetworkAnnotations } from '@metal-l2/api';
import { isMetalHttpError } from '@metal-l2/metal-api';
import { MACHINE_NETWORK_LABEL } from '@metal-l2/network-controller';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { eventSeries, eventsOf, kubectlInNamespace } from './support/network-probes.js';
import {
  CAPP_TOKEN,
  CLUSTER,
  CONTROLLER_AGENT,
  CREDENTIALS_SECRET,
  PROJECT_ID,
  METRO,
  TOKEN,
  createMachine,
  createPool,
  createTemplate,
  createVlans,
  deviceIdOfMachine,
  machineNetwork,
  netKinds,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
  type NetworkWorld,
} from './support/network-world.js';

// Deletion always ends (DESIGN §3.3 step 7): a device that disappears under a pending VLAN batch,
// a token Metal no longer accepts, a PacketCluster or a credentials Secret deleted first (as
// cluster and namespace deletion do) end it with a Warning Event naming what could not be
// checked, never with a finalizer that stays. A device that could not be checked keeps its
// addresses claimed until Metal says it is gone (its server may still answer on them). The last test of "deletion ends" deletes its
// namespace itself; a device deprovisioning in Metal (still readable) has a world of its own.

// Kept addresses are looked at again once per drift period: short here, so a release is seen.
const world = useNetworkWorld('net-del', { timings: { driftCheckMs: 2_000 } });

async function deviceGone(deviceId: string): Promise<boolean> {
  try {
    await world.metal.devices.get(deviceId);
    return false;
  } catch (err: unknown) {
    if (isMetalHttpError(err) && err.status === 404) return true;
    throw err;
  }
}

async function claimsOf(machine: string, w: NetworkWorld = world): Promise<string[]> {
  return (await w.objects.list(netKinds.claim, w.ns))
    .filter((c) => (c.metadata.ownerReferences ?? []).some((o) => (o as { name?: string }).name === machine))
    .map((c) => c.metadata.name);
}

async function machineNetworkGone(name: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    `MachineNetwork ${name} to be gone`,
    async () => {
      const mn = await machineNetwork(world, name);
      if (mn === undefined) return true;
      throw new Error(JSON.stringify(mn.status?.conditions ?? 'no conditions'));
    },
    { timeoutMs, intervalMs: 200 },
  );
}

/** The claims a machine's MachineNetwork made, by its label (a kept claim has no owner any more). */
async function claimsByLabel(machine: string): Promise<string[]> {
  return (await world.objects.list(netKinds.claim, world.ns))
    .filter((c) => c.metadata.labels?.[MACHINE_NETWORK_LABEL] === machine)
    .map((c) => c.metadata.name);
}

/** The vxlans on one port of a device, as the simulator holds them (no API token needed). */
function simVxlans(deviceId: string, port: string): number[] {
  const store = world.sim.store;
  const found = (store.devices.get(deviceId)?.portIds ?? []).map((id) => store.ports.get(id)).find((p) => p?.name === port);
  return (found?.vlans ?? []).map((v) => store.vlans.get(v.vlanId)?.vxlan ?? 0).sort((a, b) => a - b);
}

/**
 * Metal revokes both API tokens, ours and CAPP's (a project's tokens rotated, say): every call
 * with them answers 401 until `restore`.
 */
function revokeTokens(): { restore(): void } {
  const grants = [TOKEN, CAPP_TOKEN].map((token) => [token, world.sim.store.tokens.get(token)] as const);
  for (const [token] of grants) world.sim.store.tokens.delete(token);
  return {
    restore: () => {
      for (const [token, grant] of grants) if (grant !== undefined) world.sim.store.tokens.set(token, grant);
    },
  };
}

beforeAll(async () => {
  await createVlans(world, [1000]);
  await createPool(world, 'del', 50);
  await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('del')] }] }]);
}, 60_000);

describe('deletion ends', () => {
  test(
    'a device deleted while a VLAN batch of ours is pending: the batch Metal no longer knows is forgotten and the claims are released',
    async () => {
      // The controller's batch polls fail for now: the VLAN 1000 assignment batch it sends when
      // the device is up stays pending, and recorded as ours.
      const holdPoll = world.sim.faults.add({
        fault: 'server-error',
        status: 503,
        operationId: 'findPortVlanAssignmentBatchByPortIdAndBatchId',
      });
      await createMachine(world, 'gone-0', 'hb');
      await waitFor(
        'the VLAN batch to be pending',
        async () => {
          const status = (await machineNetwork(world, 'gone-0'))?.status;
          return status?.pendingBatch !== undefined && (status.assignedVlans ?? []).length > 0;
        },
        { timeoutMs: 60_000 },
      );
      const deviceId = await deviceIdOfMachine(world, 'gone-0');
      await world.objects.delete(netKinds.packetMachine, 'gone-0', world.ns);
      await waitFor('CAPP to delete the device', () => deviceGone(deviceId), { timeoutMs: 60_000 });
      world.sim.faults.remove(holdPoll.id);

      await machineNetworkGone('gone-0', 60_000);
      expect(await claimsOf('gone-0')).toEqual([]);
    },
    testTimeout(60_000, 60_000, 60_000, timeouts.deviceReady),
  );

  test(
    "a token Metal refuses (401), CAPP's too: deletion ends, but the address stays claimed while the server may use it, and is released once the device is gone",
    async () => {
      await createMachine(world, 'rev-0', 'hb');
      await waitMachineNetworkReady(world, 'rev-0');
      const deviceId = await deviceIdOfMachine(world, 'rev-0');
      const claims = await claimsByLabel('rev-0');
      expect(claims).toHaveLength(1);
      const claim = claims[0] ?? '';
      const recorded = ((await machineNetwork(world, 'rev-0'))?.status?.addresses ?? []) as { claimName: string; address: string }[];
      const address = recorded.find((a) => a.claimName === claim)?.address ?? '';
      expect(address).not.toBe('');

      const tokens = revokeTokens();
      try {
        await kubectlInNamespace(world, 'delete', 'packetmachine', 'rev-0', '--wait=false');
        await machineNetworkGone('rev-0');
        // CAPP could not delete the server either: it is up, with the VLAN on bond0.
        expect(world.sim.store.devices.get(deviceId)?.state).toBe('active');
        expect(simVxlans(deviceId, 'bond0')).toEqual([1000]);
        expect(await world.objects.get(netKinds.packetMachine, 'rev-0', world.ns)).toBeDefined();
        // So its address stays claimed: the claim is owned by nobody (the garbage collector leaves
        // it), records its device, and its IPAddress still holds the address.
        const kept = await world.objects.get(netKinds.claim, claim, world.ns);
        expect(kept).toBeDefined();
        expect(kept?.metadata.deletionTimestamp).toBeUndefined();
        expect(kept?.metadata.ownerReferences ?? []).toEqual([]);
        expect(JSON.parse(kept?.metadata.annotations?.[NetworkAnnotations.keptFor] ?? '{}')).toEqual({
          machineNetwork: 'rev-0',
          deviceID: deviceId,
        });
        expect(kept?.metadata.annotations?.[NetworkAnnotations.keptBecause]).toContain(
          'delete this IPAddressClaim to release the address now',
        );
        expect((await world.objects.get(netKinds.address, claim, world.ns))?.spec?.['address']).toBe(address);

        // The kept-address controller has looked at the device since, Metal refused it too, and the claim stays.
        await waitFor('the kept address to be checked', () => world.logLines.some((l) => l.includes('their device cannot be checked')), {
          timeoutMs: 30_000,
        });
        expect((await world.objects.get(netKinds.claim, claim, world.ns))?.metadata.deletionTimestamp).toBeUndefined();

        // Said where the user looks: one Event on the MachineNetwork and one on its PacketMachine
        // (both rev-0). The step may run again after a conflicting write; a repeat with the same
        // message only counts up on the same Event, a different message would be a second one.
        const warnings = eventSeries(eventsOf(world, 'rev-0').filter((e) => e.reason === 'VLANsNotChecked'));
        expect(warnings.map((w) => w.kind).sort()).toEqual(['MachineNetwork', 'PacketMachine']);
        for (const warning of warnings) {
          expect(warning.type).toBe('Warning');
          expect(warning.message).toContain('401');
          expect(warning.message).toContain('bond0:1000');
          expect(warning.message).toContain(`${address} (claim ${claim}) are kept`);
        }
        for (const text of world.logLines) {
          expect(text).not.toContain(TOKEN);
          expect(text).not.toContain(CAPP_TOKEN);
        }
      } finally {
        tokens.restore();
        // The token works again: CAPP (woken at once rather than after its backoff) deletes the
        // server, and the next look releases the address. (Cleanup too: a failure above must
        // not leave the PacketMachine waiting on CAPP's backoff when the namespace goes.)
        await world.objects
          .patch(netKinds.packetMachine, 'rev-0', world.ns, { metadata: { annotations: { 'test.metal-l2/nudge': '1' } } })
          .catch(() => undefined);
      }

      await waitFor(
        'the kept claim and its IPAddress to be gone',
        async () =>
          (await world.objects.get(netKinds.claim, claim, world.ns)) === undefined &&
          (await world.objects.get(netKinds.address, claim, world.ns)) === undefined,
        { timeoutMs: 60_000 },
      );
      expect(world.sim.store.devices.get(deviceId)?.state ?? 'gone').not.toBe('active');
      expect(eventsOf(world, claim).map((e) => e.reason)).toContain('KeptAddressReleased');
    },
    testTimeout(60_000, 30_000, 30_000, 60_000),
  );

  test('the PacketCluster deleted before the machine (cluster deletion order): deletion ends with a Warning naming it; the address is kept until the device is gone', async () => {
    await createMachine(world, 'pc-0', 'hb');
    await waitMachineNetworkReady(world, 'pc-0');
    const deviceId = await deviceIdOfMachine(world, 'pc-0');
    const [claim = ''] = await claimsByLabel('pc-0');
    await kubectlInNamespace(world, 'delete', 'packetcluster', CLUSTER);
    try {
      await kubectlInNamespace(world, 'delete', 'packetmachine', 'pc-0', '--wait=false');
      await machineNetworkGone('pc-0');
      const warning = eventsOf(world, 'pc-0').find((e) => e.reason === 'VLANsNotChecked');
      expect(warning?.message).toContain(`PacketCluster ${world.ns}/${CLUSTER}`);
      // The token still works: the kept-address controller reads the device, which CAPP cannot
      // delete without its PacketCluster, so the claim stays.
      await waitFor(
        'the kept address to be checked',
        () =>
          world.sim.requests
            .entries({ deviceId, userAgent: CONTROLLER_AGENT })
            .some((e) => e.operationId === 'findDeviceById' && e.status === 200 && !e.path.includes('include')),
        { timeoutMs: 30_000 },
      );
      expect(world.sim.store.devices.get(deviceId)?.state).toBe('active');
      expect((await world.objects.get(netKinds.claim, claim, world.ns))?.metadata.annotations?.[NetworkAnnotations.keptFor]).toContain(
        deviceId,
      );
    } finally {
      // CAPP needs it to finish deleting the PacketMachine (CAPI removes it only after the machines).
      await world.objects.create(netKinds.packetCluster, {
        metadata: { name: CLUSTER, namespace: world.ns },
        spec: { projectID: PROJECT_ID, metro: METRO },
      });
    }
    // The fixture does not watch PacketClusters: a touch of the PacketMachine wakes it.
    await kubectlInNamespace(world, 'annotate', 'packetmachine', 'pc-0', 'test.metal-l2/nudge=1');
    await waitFor(
      'CAPP to finish the PacketMachine',
      async () => (await world.objects.get(netKinds.packetMachine, 'pc-0', world.ns)) === undefined,
      {
        timeoutMs: 60_000,
      },
    );
    await waitFor('the kept claim to be released', async () => (await world.objects.get(netKinds.claim, claim, world.ns)) === undefined, {
      timeoutMs: 30_000,
    });
  });

  test(
    'namespace deletion with the credentials Secret deleted first ends: nothing waits for the Secret',
    async () => {
      await createMachine(world, 'ns-0', 'hb');
      await waitMachineNetworkReady(world, 'ns-0');
      // CAPI's and CAPP's finalizers on the Machine, Cluster and PacketCluster (no CAPI
      // controller runs here): they keep them until the PacketMachine is gone, so CAPP can
      // delete the device.
      const held = [
        [netKinds.machine, 'ns-0', 'machine.cluster.x-k8s.io'],
        [netKinds.cluster, CLUSTER, 'cluster.cluster.x-k8s.io'],
        [netKinds.packetCluster, CLUSTER, 'packetcluster.infrastructure.cluster.x-k8s.io'],
      ] as const;
      for (const [kind, name, finalizer] of held) {
        await world.objects.patch(kind, name, world.ns, { metadata: { finalizers: [finalizer] } });
      }
      const ns = world.ns;
      await kubectlInNamespace(world, 'delete', 'secret', CREDENTIALS_SECRET);
      await kubectlInNamespace(world, 'delete', 'namespace', ns, '--wait=false');

      await waitFor(
        'the PacketMachine to be gone',
        async () => (await world.objects.get(netKinds.packetMachine, 'ns-0', ns)) === undefined,
        {
          timeoutMs: 60_000,
        },
      );
      await machineNetworkGone('ns-0', 60_000);
      // Play CAPI: the PacketMachine is gone, the Machine and the cluster objects may go.
      for (const [kind, name] of held) await world.objects.patch(kind, name, ns, { metadata: { finalizers: null } });
      const core = world.kc.makeApiClient(k8s.CoreV1Api);
      await waitFor(
        'the namespace to be gone',
        async () => {
          try {
            const found = await core.readNamespace({ name: ns });
            throw new Error(JSON.stringify(found.status?.conditions ?? found.status));
          } catch (err: unknown) {
            if (err instanceof k8s.ApiException && err.code === 404) return true;
            throw err;
          }
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
    },
    testTimeout(60_000, 60_000, 60_000, 120_000),
  );
});

// A world of its own: its simulator keeps a deleted device readable, in state deprovisioning, long
// enough for the machine's whole deletion (the file's world makes it 404 within half a second).
const DEPROVISIONING_MS = 20_000;

describe('a device deprovisioning in Metal', () => {
  const slow = useNetworkWorld('net-del-deprov', { delays: { deviceDeprovisioningMs: DEPROVISIONING_MS } });

  beforeAll(async () => {
    await createVlans(slow, [1000]);
    await createPool(slow, 'del', 51);
    await createTemplate(slow, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('del')] }] }]);
  }, 60_000);

  test(
    'the machine deleted after its device: deletion reads the deprovisioning device, makes no port or VLAN call for it, releases the claims',
    async () => {
      await createMachine(slow, 'dep-0', 'hb');
      await waitMachineNetworkReady(slow, 'dep-0');
      const deviceId = await deviceIdOfMachine(slow, 'dep-0');
      const mark = slow.sim.requests.lastSeq();
      // Someone deletes the server in Metal (the console, another tool) before Cluster API deletes the machine.
      await slow.metal.devices.delete(deviceId, { forceDelete: true });
      expect((await slow.metal.devices.get(deviceId)).state).toBe('deprovisioning');
      await slow.objects.delete(netKinds.packetMachine, 'dep-0', slow.ns);

      await waitFor('MachineNetwork dep-0 to be gone', async () => (await machineNetwork(slow, 'dep-0')) === undefined, {
        timeoutMs: 30_000,
        intervalMs: 200,
      });
      const ours = slow.sim.requests.entries({ afterSeq: mark, deviceId, userAgent: CONTROLLER_AGENT });
      // The deletion looked at the device, and Metal answered with it: the device was still
      // there, deprovisioning, not gone (a 404 is another branch).
      expect(ours.some((e) => e.operationId === 'findDeviceById' && e.status === 200)).toBe(true);
      expect((await slow.metal.devices.get(deviceId)).state).toBe('deprovisioning');
      // Its VLAN assignments go with the device: nothing to unassign, no port touched.
      expect(ours.filter((e) => e.path.includes('/ports/')).map((e) => `${e.method} ${e.path} ${e.status}`)).toEqual([]);
      expect(await claimsOf('dep-0', slow)).toEqual([]);

      // CAPP finishes the PacketMachine once Metal is done with the device.
      await waitFor(
        'CAPP to finish the PacketMachine',
        async () => (await slow.objects.get(netKinds.packetMachine, 'dep-0', slow.ns)) === undefined,
        { timeoutMs: DEPROVISIONING_MS + 60_000 },
      );
    },
    testTimeout(60_000, timeouts.claimBound, 30_000, DEPROVISIONING_MS + 60_000),
  );
});
