import { describe, expect, test } from '@jest/globals';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
import { kubectl, loggedEvents, poolUsed, vxlansOf, waitPoolUsed } from './support/network-probes.js';
import {
  CONTROLLER_AGENT,
  condition,
  createMachine,
  createPool,
  createTemplate,
  deviceIdOfMachine,
  machineNetwork,
  netKinds,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
  waitMachineNetworkReason,
  type NetworkWorld,
  createHybridBondedTemplate,
  onFirstUse,
} from './support/network-world.js';

// The network controller at its edges, judged by what the device shows: a MachineNetwork deleted
// by a user while its machine lives, a crash with a VLAN batch in flight, a boot script that never
// reports. Each ends with the server's network intact and a status that says what is true.

const BOOT_SCRIPT_TIMEOUT_MS = 3_000;
const world = useNetworkWorld('net-edges', { timings: { bootScriptTimeoutMs: BOOT_SCRIPT_TIMEOUT_MS } });

const setup = onFirstUse(() => createHybridBondedTemplate(world));

/** Deletes a PacketMachine while its device outlives it (CAPP's deleteDevice held), and waits for the VLAN to go. */
async function deleteMachineAndExpectUnassigned(w: NetworkWorld, name: string, deviceId: string): Promise<void> {
  const rule = w.sim.faults.add({ fault: 'server-error', status: 503, operationId: 'deleteDevice' });
  try {
    await w.objects.delete(netKinds.packetMachine, name, w.ns);
    await waitFor(
      'VLAN 1000 unassigned while the device still exists',
      async () => JSON.stringify(await vxlansOf(w, deviceId, 'bond0')) === '[]',
      {
        timeoutMs: 30_000,
      },
    );
    await waitFor('the MachineNetwork gone', async () => (await machineNetwork(w, name)) === undefined, { timeoutMs: 30_000 });
  } finally {
    w.sim.faults.remove(rule.id);
  }
}

describe('the network controller at its edges', () => {
  test('kubectl delete machinenetwork on a live machine keeps its VLAN and address; the new object reads the device before it says Ready', async () => {
    await setup();
    await createMachine(world, 'hb-1', 'hb');
    const before = await waitMachineNetworkReady(world, 'hb-1');
    const deviceId = await deviceIdOfMachine(world, 'hb-1');
    const address = before.status.addresses[0].address as string;
    await waitPoolUsed(world, 'vlan-1000', 1);

    // The device's VLANs read before the delete, after every change to its ports while the
    // MachineNetwork goes and comes back, and once more after the new one says Ready.
    const reads: Promise<number[] | undefined>[] = [vxlansOf(world, deviceId, 'bond0')];
    const unsubscribe = world.sim.store.subscribe((change) => {
      if (change.kind === 'port' && change.deviceId === deviceId) reads.push(vxlansOf(world, deviceId, 'bond0'));
    });
    const mark = world.sim.requests.lastSeq();
    await kubectl(['delete', 'machinenetwork', 'hb-1', '-n', world.ns]);

    const again = await waitFor(
      'a new MachineNetwork hb-1 Ready',
      async () => {
        const mn = await machineNetwork(world, 'hb-1');
        return mn !== undefined && mn.metadata.uid !== before.metadata.uid && condition(mn, 'Ready')?.status === 'True' ? mn : false;
      },
      { timeoutMs: 60_000 },
    );
    unsubscribe();
    reads.push(vxlansOf(world, deviceId, 'bond0'));
    const seen = (await Promise.all(reads)).map((v) => JSON.stringify(v));
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.filter((s) => s !== '[1000]')).toEqual([]);
    expect(world.sim.requests.count({ afterSeq: mark, deviceId, operationId: 'createPortVlanAssignmentBatch' })).toBe(0);

    // Same address, still allocated once; the claim now belongs to the new object.
    expect(again.status.addresses[0].address).toBe(address);
    await waitPoolUsed(world, 'vlan-1000', 1);
    const claims = (await world.objects.list(netKinds.claim, world.ns)).filter((c) => c.metadata.name?.startsWith('hb-1-'));
    expect(claims.map((c) => (c.metadata.ownerReferences as { uid: string }[] | undefined)?.map((o) => o.uid))).toEqual([
      [again.metadata.uid],
    ]);
    // Ready came from a read of the device, not from a record.
    expect(
      world.sim.requests.count({ afterSeq: mark, deviceId, operationId: 'findDeviceById', userAgent: CONTROLLER_AGENT }),
    ).toBeGreaterThan(0);
    expect(loggedEvents(world, 'NetworkKept', 'hb-1')).toHaveLength(1);

    // The VLAN is still known as ours: deleting the machine takes it away.
    expect(again.status.assignedVlans).toEqual([expect.objectContaining({ port: 'bond0', vxlan: 1000 })]);
    await deleteMachineAndExpectUnassigned(world, 'hb-1', deviceId);
    await waitFor('the address back in the pool', async () => (await poolUsed(world, 'vlan-1000')) === 0, { timeoutMs: 30_000 });
  });

  test('a re-created MachineNetwork whose address differs from the one the server booted with says so and is never Ready', async () => {
    await setup();
    await createMachine(world, 'hb-2', 'hb');
    const before = await waitMachineNetworkReady(world, 'hb-2');
    const booted = before.status.addresses[0].address as string;

    // While the controller is down, the claim goes and someone else gets its address.
    await world.stopNetworkController();
    await kubectl(['delete', 'ipaddressclaim', 'hb-2-bond0-v1000-0', '-n', world.ns]);
    await world.objects.create(netKinds.claim, {
      metadata: { name: 'squatter', namespace: world.ns },
      spec: { poolRef: poolRef('vlan-1000') },
    });
    await waitFor(
      'the squatter to get the address the server booted with',
      async () => (await world.objects.get(netKinds.claim, 'squatter', world.ns))?.status?.addressRef?.name !== undefined,
      { timeoutMs: 30_000 },
    );
    await kubectl(['delete', 'machinenetwork', 'hb-2', '-n', world.ns, '--wait=false']);
    await world.restartNetworkController();

    const mn = await waitFor(
      'the new MachineNetwork to report the differing configuration',
      async () => {
        const found = await machineNetwork(world, 'hb-2');
        return found !== undefined &&
          found.metadata.uid !== before.metadata.uid &&
          condition(found, 'UserDataInjected')?.reason === 'InjectedConfigurationDiffers'
          ? found
          : false;
      },
      { timeoutMs: 60_000 },
    );
    const now = mn.status.addresses[0].address as string;
    expect(now).not.toBe(booted);
    expect(condition(mn, 'UserDataInjected')?.message).toContain(now);
    expect(condition(mn, 'Ready')).toMatchObject({ status: 'False', reason: 'InjectedConfigurationDiffers' });
    expect(loggedEvents(world, 'InjectedConfigurationDiffers', 'hb-2').length).toBeGreaterThan(0);
    // It stays so: later reconciles (the ports converge meanwhile) never turn it Ready.
    await waitFor(
      'the ports configured',
      async () => condition(await machineNetwork(world, 'hb-2'), 'PortsConfigured')?.status === 'True',
      {
        timeoutMs: 30_000,
      },
    );
    await staysTrue('Ready stays False', async () => condition(await machineNetwork(world, 'hb-2'), 'Ready')?.status === 'False', 2_000);
  });

  test('a crash while the VLAN batch is in flight leaves the VLAN known as ours, so deleting the machine unassigns it', async () => {
    await setup();
    // The simulator holds the batch POST, then applies it although the client has gone.
    const rule = world.sim.faults.add({ fault: 'latency', latencyMs: 3_000, operationId: 'createPortVlanAssignmentBatch', times: 1 });
    await createMachine(world, 'cr-0', 'hb');
    const deviceId = await deviceIdOfMachine(world, 'cr-0');
    await waitFor('the batch POST to reach the simulator', () => rule.matched === 1, { timeoutMs: 60_000, intervalMs: 20 });
    await world.stopNetworkController(); // the reconcile is aborted mid-call: no status write after the POST
    await waitFor(
      'the orphaned batch to assign VLAN 1000',
      async () => JSON.stringify(await vxlansOf(world, deviceId, 'bond0')) === '[1000]',
      {
        timeoutMs: 30_000,
      },
    );
    await world.restartNetworkController();

    const mn = await waitMachineNetworkReady(world, 'cr-0');
    expect(mn.status.assignedVlans).toEqual([expect.objectContaining({ port: 'bond0', vxlan: 1000 })]);
    await deleteMachineAndExpectUnassigned(world, 'cr-0', deviceId);
  });

  test('a layer-2 machine whose boot script never reports says BootScriptTimeout, keeps layer 3, and goes on once it reports', async () => {
    await setup();
    await createPool(world, 'vlan-1001', 11);
    await createTemplate(world, 'l2b', [
      { name: 'bond0', layer2: true, vlans: [{ vxlan: 1001, addressesFromPools: [poolRef('vlan-1001')] }] },
    ]);
    await createMachine(world, 'l2b-1', 'l2b');
    const mn = await waitMachineNetworkReason(
      world,
      'l2b-1',
      { type: 'PortsConfigured', reason: 'BootScriptTimeout' },
      { timeoutMs: 60_000 },
    );
    expect(condition(mn, 'PortsConfigured')?.status).toBe('False');
    expect(condition(mn, 'PortsConfigured')?.message).toMatch(/no "metadata captured".*user data.*metal-l2\.service.*curl or wget/s);
    expect(condition(mn, 'Ready')).toMatchObject({ status: 'False', reason: 'BootScriptTimeout' });
    expect(loggedEvents(world, 'BootScriptTimeout', 'l2b-1')).toHaveLength(1);
    const deviceId = await deviceIdOfMachine(world, 'l2b-1');
    expect(world.sim.requests.count({ deviceId, operationId: 'convertLayer2', userAgent: CONTROLLER_AGENT })).toBe(0);

    // Late is not never: the report lets it go on.
    await playBootScriptNow(world, deviceId);
    await waitMachineNetworkReady(world, 'l2b-1');
  });
});

/** Posts "metadata captured" at once (playBootScript waits for WaitingForBootScript, which a timed-out machine no longer shows). */
async function playBootScriptNow(w: NetworkWorld, deviceId: string): Promise<void> {
  const res = await fetch(`${w.sim.url}/metadata/${deviceId}/events`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ state: 'running', code: 1001, message: 'metal-l2: metadata captured' }),
  });
  if (res.status !== 204) throw new Error(`posting the user-state event answered ${res.status}: ${await res.text()}`);
}
