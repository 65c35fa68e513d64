import { describe, expect, test } from '@jest/globals';
import { IGNITION_UNIT, readInjectionHash } from '@metal-l2/machine-config';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { CABPK_IGNITION_JOIN, CABPK_OWN_FINDINGS } from '../../packages/machine-config/test/fixtures/ignition.js';
import { ignitionBinaries, validateIgnition } from '../../packages/machine-config/test/support/ignition.js';
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

  test('Flatcar (CABPK v1.7.9 format: ignition, spec 2.3): the device boots valid Ignition carrying the networkd units and our unit', async () => {
    await ignitionBinaries(); // built by .ci/run beforehand; else built here, once (minutes)
    await setup();
    await world.objects.create(netKinds.template, {
      metadata: { name: 'flatcar-hybrid-bonded', namespace: world.ns },
      spec: {
        os: { renderer: 'networkd' },
        ports: [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }],
      },
    });
    await createMachine(world, 'fc-0', 'flatcar-hybrid-bonded', { format: 'ignition', value: CABPK_IGNITION_JOIN });
    const mn = await waitMachineNetworkReady(world, 'fc-0');
    expect(condition(mn, 'UserDataInjected')).toMatchObject({ status: 'True', reason: 'Injected' });
    const device = await devicePortViews(world, await deviceIdOfMachine(world, 'fc-0'));
    expect(device.ports.find((p) => p.name === 'bond0')?.vxlans).toEqual([1000]);

    // CAPP created the device from the edited JSON: Ignition's own validator finds nothing of ours.
    expect(await validateIgnition(device.userdata)).toEqual({ code: 0, findings: CABPK_OWN_FINDINGS });
    expect(readInjectionHash(device.userdata)).toBe(mn.status.userData.hash);
    const config = JSON.parse(device.userdata) as {
      ignition: { version: string };
      storage: { files: { path: string; contents: { source: string } }[] };
      systemd: { units: { name: string }[] };
    };
    expect(config.ignition.version).toBe('2.3.0');
    expect(config.systemd.units.map((u) => u.name)).toEqual(['kubeadm.service', IGNITION_UNIT]);
    const text = (path: string): string => {
      const source = config.storage.files.find((f) => f.path === path)?.contents.source ?? '';
      return Buffer.from(source.replace(/^data:;base64,/, ''), 'base64').toString('utf8');
    };
    expect(JSON.parse(text('/opt/metal-l2/netcfg.json'))).toMatchObject({ renderer: 'networkd', ports: [{ name: 'bond0', kind: 'bond' }] });
    const shipped = config.storage.files.filter((f) => f.path.startsWith('/opt/metal-l2/files/')).map((f) => text(f.path));
    // bond0's drop-in, then the VLAN's .netdev and .network: placeholders the boot script resolves by MAC.
    expect(shipped).toEqual([
      expect.stringContaining('[Network]\nVLAN=@port:bond0@.1000\n'),
      expect.stringContaining('Kind=vlan\n\n[VLAN]\nId=1000\n'),
      expect.stringContaining(`Address=${mn.status.addresses[0].address}/24\n`),
    ]);
  }, 540_000);

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
