import { describe, expect, test } from '@jest/globals';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { devicePortViews } from './support/network-probes.js';
import {
  CONTROLLER_AGENT,
  TOKEN,
  condition,
  createMachine,
  createTemplate,
  deviceIdOfMachine,
  machineNetwork,
  netKinds,
  playBootScript,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
  createTwoVlanPools,
  onFirstUse,
} from './support/network-world.js';

// Each Metal network mode end to end: our webhook pauses the PacketMachine, the network controller
// claims addresses from our IPAM provider, injects the configuration into the bootstrap data, lifts
// the pause; the CAPP fixture creates the device with that user data; the controller converts the
// ports and assigns the VLANs. Asserted on what a user sees: the MachineNetwork, the device in the
// simulator, the Metal calls the controller made.

const world = useNetworkWorld('net-modes');

function controllerCalls(deviceId: string): Record<string, number> {
  return world.sim.requests.countByOperation({ deviceId, userAgent: CONTROLLER_AGENT });
}

const setup = onFirstUse(() => createTwoVlanPools(world));

describe('network modes', () => {
  test('hybrid-bonded: a tagged VLAN on bond0 costs one device read, one batch and one poll', async () => {
    await setup();
    await createTemplate(world, 'hybrid-bonded', [
      {
        name: 'bond0',
        vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')], routes: [{ to: '10.60.0.0/16', via: '192.168.10.1' }] }],
      },
    ]);
    const pm = await createMachine(world, 'hb-0', 'hybrid-bonded');
    // Our webhook paused it on creation, and marked the pause as ours.
    expect(pm.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeDefined();
    expect(pm?.metadata.annotations?.['network.metal.x-k8s.io/hold']).toBeDefined();

    const mn = await waitMachineNetworkReady(world, 'hb-0');
    expect(mn.status.networkType).toBe('hybrid-bonded');
    expect(mn.status.addresses).toEqual([
      {
        port: 'bond0',
        vxlan: 1000,
        address: expect.stringMatching(/^192\.168\.10\./),
        prefix: 24,
        gateway: '192.168.10.1',
        claimName: 'hb-0-bond0-v1000-0',
      },
    ]);
    for (const type of ['AddressesAllocated', 'UserDataInjected', 'PortsConfigured']) expect(condition(mn, type)?.status).toBe('True');

    const deviceId = await deviceIdOfMachine(world, 'hb-0');
    const device = await devicePortViews(world, deviceId);
    expect(device.networkType).toBe('hybrid-bonded');
    expect(device.ports.find((p) => p.name === 'bond0')?.vxlans).toEqual([1000]);
    // CAPP created the device from the injected user data, after its Go templating.
    expect(device.userdata).toContain('X-Metal-L2: v1;');
    expect(device.userdata).toContain('## template: jinja');
    expect(device.userdata).toContain('provider-id: equinixmetal://{{ v1.instance_id }}');
    expect(device.userdata).toContain('MINOR=$(echo v1.30.4 | cut -d. -f2)');
    expect(device.userdata).not.toContain('{{ .kubernetesVersion }}');

    const calls = controllerCalls(deviceId);
    expect(calls).toEqual({
      findDeviceById: 1,
      createPortVlanAssignmentBatch: 1,
      findPortVlanAssignmentBatchByPortIdAndBatchId: expect.any(Number),
    });
    expect(Object.values(calls).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(4);

    const pmAfter = await world.objects.get(netKinds.packetMachine, 'hb-0', world.ns);
    expect(pmAfter?.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeUndefined();
    expect(mn.status.assignedVlans).toEqual([expect.objectContaining({ port: 'bond0', vxlan: 1000 })]);
  });

  test('hybrid: eth1 leaves the bond, one VLAN untagged (native) and one tagged', async () => {
    await setup();
    await createTemplate(world, 'hybrid', [
      {
        name: 'eth1',
        bonded: false,
        vlans: [
          { vxlan: 1001, native: true, addressesFromPools: [poolRef('vlan-1001')] },
          { vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] },
        ],
      },
    ]);
    await createMachine(world, 'hy-0', 'hybrid');
    const mn = await waitMachineNetworkReady(world, 'hy-0');
    expect(mn.status.networkType).toBe('hybrid');
    const deviceId = await deviceIdOfMachine(world, 'hy-0');
    const device = await devicePortViews(world, deviceId);
    expect(device.networkType).toBe('hybrid');
    const eth1 = device.ports.find((p) => p.name === 'eth1');
    expect(eth1).toMatchObject({ bonded: false, vxlans: [1000, 1001], native: 1001 });
    expect(device.ports.find((p) => p.name === 'eth0')?.bonded).toBe(true);
  });

  test('layer2-bonded: waits for the boot script before layer 3 goes, then converts bond0', async () => {
    await setup();
    await createTemplate(world, 'layer2-bonded', [
      {
        name: 'bond0',
        layer2: true,
        vlans: [
          { vxlan: 1000, native: true, addressesFromPools: [poolRef('vlan-1000')] },
          { vxlan: 1001, addressesFromPools: [poolRef('vlan-1001')] },
        ],
      },
    ]);
    await createMachine(world, 'l2b-0', 'layer2-bonded');
    await playBootScript(world, 'l2b-0');
    const deviceId = await deviceIdOfMachine(world, 'l2b-0');
    // Nothing was converted before the boot script said it had the metadata.
    const convertsBefore = world.sim.requests.entries({ deviceId, operationId: 'convertLayer2', userAgent: CONTROLLER_AGENT });
    const eventsRead = world.sim.requests.entries({ deviceId, operationId: 'findDeviceEvents', userAgent: CONTROLLER_AGENT });
    expect(eventsRead.length).toBeGreaterThan(0);
    const mn = await waitMachineNetworkReady(world, 'l2b-0');
    for (const convert of convertsBefore) expect(convert.seq).toBeGreaterThan(eventsRead[0]?.seq ?? 0);
    expect(mn.status.networkType).toBe('layer2-bonded');
    const device = await devicePortViews(world, deviceId);
    expect(device.networkType).toBe('layer2-bonded');
    expect(device.ports.find((p) => p.name === 'bond0')).toMatchObject({ vxlans: [1000, 1001], native: 1000 });
  });

  test('layer2-individual: both ports leave the bond, each with its VLAN', async () => {
    await setup();
    await createTemplate(world, 'layer2-individual', [
      { name: 'bond0', layer2: true, bonded: false },
      { name: 'eth0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] },
      { name: 'eth1', vlans: [{ vxlan: 1001, addressesFromPools: [poolRef('vlan-1001')] }] },
    ]);
    await createMachine(world, 'l2i-0', 'layer2-individual');
    await playBootScript(world, 'l2i-0');
    const mn = await waitMachineNetworkReady(world, 'l2i-0');
    expect(mn.status.networkType).toBe('layer2-individual');
    const deviceId = await deviceIdOfMachine(world, 'l2i-0');
    const device = await devicePortViews(world, deviceId);
    expect(device.networkType).toBe('layer2-individual');
    expect(device.ports.find((p) => p.name === 'eth0')).toMatchObject({ bonded: false, vxlans: [1000] });
    expect(device.ports.find((p) => p.name === 'eth1')).toMatchObject({ bonded: false, vxlans: [1001] });
  });

  test('a restarted controller reconciles every machine again without a Metal call', async () => {
    const names = ['hb-0', 'hy-0', 'l2b-0', 'l2i-0'];
    for (const name of names) await waitMachineNetworkReady(world, name);
    const mark = world.sim.requests.lastSeq();
    const logMark = world.logLines.length;
    await world.restartNetworkController(); // a fresh process lists and reconciles every machine
    await waitFor(
      'the restarted controller to reconcile every machine',
      () =>
        names.every((name) =>
          // "reconciled, coming back later" for a configured machine: it returns for its drift check.
          world.logLines.slice(logMark).some((line) => line.includes('"msg":"reconciled') && line.includes(`"name":"${name}"`)),
        ),
      { timeoutMs: 30_000 },
    );
    expect(world.sim.requests.entries({ afterSeq: mark, userAgent: CONTROLLER_AGENT })).toEqual([]);
  });

  test('the token never appears in logs, events or conditions', async () => {
    expect(world.logLines.join('\n')).not.toContain(TOKEN);
    for (const name of ['hb-0', 'hy-0', 'l2b-0', 'l2i-0']) expect(JSON.stringify(await machineNetwork(world, name))).not.toContain(TOKEN);
  });
});
