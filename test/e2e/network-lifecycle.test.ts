import { describe, expect, test } from '@jest/globals';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { poolUsed, vxlansOf, waitPoolUsed } from './support/network-probes.js';
import {
  CONTROLLER_AGENT,
  PROJECT_ID,
  condition,
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
  waitMachineNetworkReason,
} from './support/network-world.js';

// A machine's life after it is configured: deletion gives back what it took (its VLANs, not
// anybody else's; its addresses), and what a user gets wrong is said on the MachineNetwork.

const world = useNetworkWorld('net-life');

describe('machine lifecycle', () => {
  test('deletion unassigns only the VLANs this controller assigned and releases the addresses', async () => {
    await createVlans(world, [1000, 1099]);
    await createPool(world, 'vlan-1000', 10);
    await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }]);
    await createMachine(world, 'del-0', 'hb');
    await waitMachineNetworkReady(world, 'del-0');
    const deviceId = await deviceIdOfMachine(world, 'del-0');
    await waitPoolUsed(world, 'vlan-1000', 1);

    // Someone else assigns VLAN 1099 to the same bond by hand.
    const device = await world.metal.devices.get(deviceId, { include: ['network_ports'] });
    const bond0 = (device.network_ports ?? []).find((p) => p.name === 'bond0');
    const vlan1099 = (await world.metal.virtualNetworks.list(PROJECT_ID, { metro: 'da' })).find((v) => v.vxlan === 1099);
    await world.metal.ports.assign(bond0?.id ?? '', vlan1099?.id ?? '');
    await waitFor('VLAN 1099 assigned by hand', async () => JSON.stringify(await vxlansOf(world, deviceId, 'bond0')) === '[1000,1099]', {
      timeoutMs: 10_000,
    });

    // Hold CAPP's device deletion so the device outlives the machine for a while, as a slow API would.
    const rule = world.sim.faults.add({ fault: 'server-error', status: 503, operationId: 'deleteDevice' });
    await world.objects.delete(netKinds.packetMachine, 'del-0', world.ns);

    await waitFor(
      'VLAN 1000 unassigned while the device still exists',
      async () => JSON.stringify(await vxlansOf(world, deviceId, 'bond0')) === '[1099]',
      { timeoutMs: 30_000 },
    );
    await waitFor('the MachineNetwork gone', async () => (await machineNetwork(world, 'del-0')) === undefined, { timeoutMs: 30_000 });
    await waitFor('the address back in the pool', async () => (await poolUsed(world, 'vlan-1000')) === 0, { timeoutMs: 30_000 });
    expect(await world.objects.list(netKinds.claim, world.ns)).toEqual([]);

    world.sim.faults.remove(rule.id);
    await waitFor('CAPP to delete the device', async () => (await vxlansOf(world, deviceId, 'bond0')) === undefined, { timeoutMs: 60_000 });
    const mark = world.sim.requests.lastSeq();
    // A later machine handled from start to end: the controller went through its device polls,
    // batch polls and wake-ups meanwhile, and none of them was for the deleted machine.
    await createMachine(world, 'del-1', 'hb');
    await waitMachineNetworkReady(world, 'del-1');
    const later = await deviceIdOfMachine(world, 'del-1');
    expect(world.sim.requests.count({ afterSeq: mark, deviceId: later, userAgent: CONTROLLER_AGENT })).toBeGreaterThan(0);
    expect(world.sim.requests.count({ afterSeq: mark, deviceId, userAgent: CONTROLLER_AGENT })).toBe(0);
  });

  test('an exhausted pool keeps the machine paused and says so; an address freed later lets it go on', async () => {
    await world.objects.create(netKinds.pool, {
      metadata: { name: 'tiny', namespace: world.ns },
      spec: { addresses: ['192.168.30.10'], prefix: 24, gateway: '192.168.30.1' },
    });
    await createTemplate(world, 'tiny', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('tiny')] }] }]);
    await createMachine(world, 'ex-0', 'tiny');
    await waitMachineNetworkReady(world, 'ex-0');
    await createMachine(world, 'ex-1', 'tiny');
    const waiting = await waitMachineNetworkReason(
      world,
      'ex-1',
      { type: 'AddressesAllocated', reason: 'PoolExhausted' },
      { timeoutMs: 30_000 },
    );
    expect(condition(waiting, 'Ready')).toMatchObject({ status: 'False', reason: 'PoolExhausted' });
    expect(condition(waiting, 'AddressesAllocated')?.message).toContain('ex-1-bond0-v1000-0');
    const pm = await world.objects.get(netKinds.packetMachine, 'ex-1', world.ns);
    expect(pm?.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeDefined();
    expect(pm?.spec.providerID).toBeUndefined();

    await world.objects.delete(netKinds.packetMachine, 'ex-0', world.ns);
    const mn = await waitMachineNetworkReady(world, 'ex-1');
    expect(mn.status.addresses[0].address).toBe('192.168.30.10');
  });

  test('ignition of a spec version that cannot be served is refused with a reason and the machine stays paused', async () => {
    await createTemplate(world, 'hb-ign', [{ name: 'bond0', vlans: [{ vxlan: 1000 }] }]);
    await createMachine(world, 'ign-0', 'hb-ign', { format: 'ignition', value: '{"ignition":{"version":"3.6.0-experimental"}}' });
    const mn = await waitMachineNetworkReason(
      world,
      'ign-0',
      { type: 'UserDataInjected', reason: 'IgnitionNotSupported' },
      { timeoutMs: 30_000 },
    );
    expect(condition(mn, 'UserDataInjected')?.message).toContain('"3.6.0-experimental" is not supported');
    const pm = await world.objects.get(netKinds.packetMachine, 'ign-0', world.ns);
    expect(pm?.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeDefined();
  });

  test('a Flatcar machine (ignition) whose template renders for ifupdown is refused before it boots a network it cannot apply', async () => {
    await createMachine(world, 'ign-1', 'hb-ign', { format: 'ignition', value: '{"ignition":{"version":"2.3.0"}}' });
    const mn = await waitMachineNetworkReason(
      world,
      'ign-1',
      { type: 'UserDataInjected', reason: 'IgnitionNeedsNetworkd' },
      { timeoutMs: 30_000 },
    );
    expect(condition(mn, 'UserDataInjected')?.message).toContain('set spec.os.renderer: networkd');
    const pm = await world.objects.get(netKinds.packetMachine, 'ign-1', world.ns);
    expect(pm?.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeDefined();
  });

  test('a bootstrap Secret shared by two Machines is refused', async () => {
    // sh-1's Machine exists before the Secret does, so sh-0 can never be injected before the
    // second Machine naming the same Secret is there to be seen.
    await createMachine(world, 'sh-1', 'hb-ign', { secretName: 'shared-bootstrap', skipSecret: true });
    await createMachine(world, 'sh-0', 'hb-ign', { secretName: 'shared-bootstrap' });
    const mn = await waitMachineNetworkReason(
      world,
      'sh-0',
      { type: 'UserDataInjected', reason: 'BootstrapSecretNotOwned' },
      { timeoutMs: 30_000 },
    );
    expect(condition(mn, 'UserDataInjected')?.message).toContain('sh-1');
  });
});
