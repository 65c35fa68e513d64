import { describe, expect, test } from '@jest/globals';
import { defaultCreateTags } from '@metal-l2/capp-fixture';
import { waitFor } from '@metal-l2/test-support/wait-for';
import {
  CLUSTER,
  CONTROLLER_AGENT,
  METRO,
  PROJECT_ID,
  createMachine,
  createPool,
  createTemplate,
  createVlans,
  deviceIdOfMachine,
  netKinds,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
} from './support/network-world.js';

// CAPP v0.9.0 looks a machine's device up by its tags on the FIRST PAGE of the project's devices
// only (10). A device CAPP created whose providerID patch was lost, and which sits past the first
// page, is not found: CAPP creates a second device for the same machine. What our network
// controller then does: it follows the PacketMachine's providerID, so the second device gets the
// machine's VLANs and the first one (an orphan, still running, billed, never deleted) gets nothing.

const world = useNetworkWorld('net-paging');

async function vxlansOn(deviceId: string): Promise<number[]> {
  const device = await world.metal.devices.get(deviceId, { include: ['network_ports.virtual_networks'] });
  return (device.network_ports ?? [])
    .flatMap((p) => p.virtual_networks ?? [])
    .map((v) => ('vxlan' in v ? (v.vxlan ?? 0) : 0))
    .sort((a, b) => a - b);
}

describe('a machine whose earlier device is past the first page of devices', () => {
  let orphanId = '';
  let deviceId = '';

  test('CAPP creates a duplicate; the network controller configures the device named by providerID and leaves the orphan alone', async () => {
    await createVlans(world, [1200]);
    await createPool(world, 'pg-1200', 50);
    await createTemplate(world, 'paged', [{ name: 'bond0', vlans: [{ vxlan: 1200, addressesFromPools: [poolRef('pg-1200')] }] }]);
    for (let i = 0; i < 10; i += 1) {
      await world.metal.devices.create(PROJECT_ID, {
        hostname: `other-${i}`,
        metro: METRO,
        plan: 'c3.small.x86',
        operating_system: 'ubuntu_22_04',
      });
    }
    // The device CAPP made for pg-0 before the patch recording its providerID was lost: CAPP's tags, 11th in the project.
    const orphan = await world.metal.devices.create(PROJECT_ID, {
      hostname: 'pg-0',
      metro: METRO,
      plan: 'c3.small.x86',
      operating_system: 'ubuntu_22_04',
      tags: [...defaultCreateTags({ namespace: world.ns, machineName: 'pg-0', clusterName: CLUSTER }), 'kubernetes.io/role:node'],
    });
    orphanId = orphan.id ?? '';

    await createMachine(world, 'pg-0', 'paged');
    const mn = await waitMachineNetworkReady(world, 'pg-0');
    deviceId = await deviceIdOfMachine(world, 'pg-0');
    expect(deviceId).not.toBe(orphanId);
    const named = [...world.sim.store.devices.values()].filter((d) => d.hostname === 'pg-0').map((d) => d.id);
    expect(named.sort()).toEqual([deviceId, orphanId].sort());

    expect(mn.status.assignedVlans).toEqual([expect.objectContaining({ port: 'bond0', vxlan: 1200 })]);
    expect(await vxlansOn(deviceId)).toEqual([1200]);
    expect(await vxlansOn(orphanId)).toEqual([]);
    expect(world.sim.requests.entries({ deviceId: orphanId, userAgent: CONTROLLER_AGENT })).toEqual([]);
    // Both devices boot the same bootstrap data: the orphan got none (it predates the machine), so
    // here only the duplicate carries the injected network configuration.
    expect((await world.metal.devices.get(deviceId)).userdata).toContain('X-Metal-L2: v1;');
  });

  test('deleting the machine deletes the device of the providerID only: the orphan stays, untouched by us', async () => {
    // As CAPI's Machine finalizer does: the PacketMachine goes first (CAPP needs its owner Machine to delete).
    await world.objects.delete(netKinds.packetMachine, 'pg-0', world.ns);
    await waitFor(
      'PacketMachine pg-0 gone',
      async () => (await world.objects.get(netKinds.packetMachine, 'pg-0', world.ns)) === undefined,
      {
        timeoutMs: 60_000,
      },
    );
    // Gone, or deprovisioning where the simulator models deletion as taking a while.
    expect(['gone', 'deprovisioning']).toContain(world.sim.store.devices.get(deviceId)?.state ?? 'gone');
    expect(world.sim.store.devices.get(orphanId)?.state).toBe('active');
    expect(world.sim.requests.entries({ deviceId: orphanId, userAgent: CONTROLLER_AGENT })).toEqual([]);
  });
});
