// Every operation the client covers, called through the client against the simulator, so that
// each request it can send and each answer it decodes is checked against the OpenAPI spec.

import { beforeAll, describe, expect, test } from '@jest/globals';
import { COVERED_OPERATIONS } from '../src/client.js';
import { collect } from '../src/pagination.js';
import { PORT_VLAN_INCLUDES } from '../src/ports.js';
import type { Device, Port, VirtualNetwork } from '../src/types.js';
import { BATCH_POLL_MS, createActiveDevice, describeContract, readDevice, useSimulator } from './support/simulator.js';
import { DEFAULT_DELAYS } from '@metal-l2/metal-sim';

const harness = useSimulator();
let startSeq: number;

beforeAll(() => {
  startSeq = harness().sim.requests.lastSeq();
});

function portNamed(device: Device, name: string): Port {
  const port = device.network_ports?.find((p) => p.name === name);
  if (port?.id === undefined) throw new Error(`device has no port ${name}`);
  return port;
}

describe('devices', () => {
  test('create, get, list (paginated), update, events and delete', async () => {
    const h = harness();
    const first = await createActiveDevice(h, 'ops-1');
    const second = await createActiveDevice(h, 'ops-2');
    expect(first).toMatchObject({ hostname: 'ops-1', state: 'active', metro: { code: 'da' } });

    const listed = await collect(h.client.devices.list(h.projectId, { perPage: 1, tag: 'metal-api-test' }));
    expect(listed.map((d) => d.hostname)).toEqual(expect.arrayContaining(['ops-1', 'ops-2']));
    expect(h.sim.requests.count({ operationId: 'findProjectDevices', afterSeq: startSeq })).toBeGreaterThanOrEqual(2);

    const updated = await h.client.devices.update(first.id ?? '', { hostname: 'ops-1-renamed', tags: ['metal-api-test', 'renamed'] });
    expect(updated).toMatchObject({ hostname: 'ops-1-renamed', tags: ['metal-api-test', 'renamed'] });

    const events = await collect(h.client.devices.events(first.id ?? '', { perPage: 2 }));
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['provisioning.active']));

    await h.client.devices.delete(second.id ?? '');
    // Deleted is not gone: the device deprovisions first, then answers 404.
    expect(await h.client.devices.get(second.id ?? '')).toMatchObject({ state: 'deprovisioning' });
    h.clock.advance(DEFAULT_DELAYS.deviceDeprovisioningMs);
    await expect(h.client.devices.get(second.id ?? '')).rejects.toMatchObject({ status: 404 });
  });
});

describe('virtual networks and ports', () => {
  let device: Device;
  let vlans: VirtualNetwork[];

  beforeAll(async () => {
    const h = harness();
    device = await createActiveDevice(h, 'ops-ports');
    vlans = [
      await h.client.virtualNetworks.create(h.projectId, { metro: 'da', vxlan: 1100, description: 'ops a', tags: ['t'] }),
      await h.client.virtualNetworks.create(h.projectId, { metro: 'da', vxlan: 1101 }),
    ];
  });

  test('VLANs: list by metro and get', async () => {
    const h = harness();
    const inDa = await h.client.virtualNetworks.list(h.projectId, { metro: 'da' });
    expect(inDa.map((v) => v.vxlan)).toEqual(expect.arrayContaining([1100, 1101]));
    await expect(h.client.virtualNetworks.get(vlans[0]?.id ?? '')).resolves.toMatchObject({ vxlan: 1100, description: 'ops a' });
  });

  test('ports: assign, unassign, batches, layer 2, native VLAN, disbond, bond, layer 3', async () => {
    const h = harness();
    const [a, b] = vlans.map((v) => v.id ?? '');
    const bond0 = portNamed(device, 'bond0').id ?? '';

    await expect(h.client.ports.get(bond0, { include: PORT_VLAN_INCLUDES })).resolves.toMatchObject({
      name: 'bond0',
      type: 'NetworkBondPort',
    });
    await expect(h.client.ports.assign(bond0, a ?? '')).resolves.toMatchObject({ id: bond0 });
    await expect(h.client.ports.listVlanAssignments(bond0)).resolves.toEqual([expect.objectContaining({ vlan: 1100 })]);
    await h.client.ports.unassign(bond0, '1100');

    const batch = await h.client.ports.createVlanAssignmentBatch(bond0, {
      vlan_assignments: [
        { vlan: a ?? '', state: 'assigned' },
        { vlan: b ?? '', state: 'assigned' },
      ],
    });
    expect(batch).toMatchObject({ state: 'queued', quantity: 2 });
    await h.advanceSim(BATCH_POLL_MS * 8);
    await expect(h.client.ports.getVlanAssignmentBatch(bond0, batch.id ?? '')).resolves.toMatchObject({ state: 'completed' });
    await expect(h.client.ports.listVlanAssignmentBatches(bond0)).resolves.toEqual([expect.objectContaining({ id: batch.id })]);

    await expect(h.client.ports.convertLayer2(bond0)).resolves.toMatchObject({ network_type: 'layer2-bonded' });
    await h.client.ports.assignNativeVlan(bond0, b ?? '');
    const withNative = await h.client.ports.get(bond0, { include: PORT_VLAN_INCLUDES });
    expect(withNative.native_virtual_network?.vxlan).toBe(1101);
    await h.client.ports.deleteNativeVlan(bond0);

    const removal = await h.client.ports.createVlanAssignmentBatch(bond0, {
      vlan_assignments: [
        { vlan: a ?? '', state: 'unassigned' },
        { vlan: b ?? '', state: 'unassigned' },
      ],
    });
    await h.advanceSim(BATCH_POLL_MS * 8);
    await expect(h.client.ports.getVlanAssignmentBatch(bond0, removal.id ?? '')).resolves.toMatchObject({ state: 'completed' });

    await h.client.ports.disbond(bond0, { bulk: true });
    expect((await readDevice(h, device.id ?? '')).network_ports?.find((p) => p.name === 'bond0')?.network_type).toBe('layer2-individual');
    await h.client.ports.bond(bond0, { bulk: true });
    await expect(h.client.ports.convertLayer3(bond0)).resolves.toMatchObject({ network_type: 'layer3' });
  });

  test('VLANs: delete once no port uses them', async () => {
    const h = harness();
    for (const v of vlans) await h.client.virtualNetworks.delete(v.id ?? '');
    await expect(h.client.virtualNetworks.get(vlans[0]?.id ?? '')).rejects.toMatchObject({ status: 404 });
  });
});

describe('VRFs, IP reservations and Metal Gateways', () => {
  test('a VRF-backed range with its gateway, made and taken down again', async () => {
    const h = harness();
    const vrf = await h.client.vrfs.create(h.projectId, { name: 'ops-vrf', metro: 'da', ip_ranges: ['10.60.0.0/16'], local_asn: 65001 });
    expect(vrf).toMatchObject({ name: 'ops-vrf', ip_ranges: ['10.60.0.0/16'] });
    await expect(h.client.vrfs.list(h.projectId, { metro: 'da' })).resolves.toEqual([expect.objectContaining({ id: vrf.id })]);
    await expect(h.client.vrfs.get(vrf.id ?? '')).resolves.toMatchObject({ local_asn: 65001 });

    const subnet = await h.client.ipReservations.create(h.projectId, {
      type: 'vrf',
      vrf_id: vrf.id ?? '',
      network: '10.60.10.0',
      cidr: 24,
    });
    expect(subnet).toMatchObject({ type: 'vrf', network: '10.60.10.0', cidr: 24 });
    const publicBlock = await h.client.ipReservations.create(h.projectId, { type: 'public_ipv4', quantity: 8, metro: 'da' });
    expect(publicBlock).toMatchObject({ type: 'public_ipv4', cidr: 29 });

    const vrfOnly = await collect(h.client.ipReservations.list(h.projectId, { types: ['vrf'] }));
    expect(vrfOnly.map((r) => r.id)).toEqual([subnet.id]);
    await expect(h.client.ipReservations.get(subnet.id ?? '')).resolves.toMatchObject({ id: subnet.id });
    await expect(h.client.ipReservations.listInVrf(vrf.id ?? '')).resolves.toEqual([expect.objectContaining({ id: subnet.id })]);
    await expect(h.client.ipReservations.getInVrf(vrf.id ?? '', subnet.id ?? '')).resolves.toMatchObject({ network: '10.60.10.0' });

    const vlan = await h.client.virtualNetworks.create(h.projectId, { metro: 'da', vxlan: 1200 });
    const gateway = await h.client.metalGateways.create(h.projectId, {
      virtual_network_id: vlan.id ?? '',
      ip_reservation_id: subnet.id ?? '',
    });
    expect(gateway).toMatchObject({ state: 'ready' });
    await expect(collect(h.client.metalGateways.list(h.projectId))).resolves.toEqual([expect.objectContaining({ id: gateway.id })]);
    await expect(h.client.metalGateways.get(gateway.id ?? '')).resolves.toMatchObject({ virtual_network: { id: vlan.id } });
    await expect(h.client.metalGateways.delete(gateway.id ?? '')).resolves.toMatchObject({ state: 'deleting' });

    await h.client.ipReservations.delete(publicBlock.id ?? '');
    await h.client.ipReservations.delete(subnet.id ?? '');
    await h.client.vrfs.delete(vrf.id ?? '');
    await expect(h.client.vrfs.get(vrf.id ?? '')).rejects.toMatchObject({ status: 404 });
  });
});

describe('coverage', () => {
  test('every covered operation was called and answered with a 2xx at least once', () => {
    const ok = harness()
      .sim.requests.entries({ afterSeq: startSeq })
      .filter((e) => e.status >= 200 && e.status < 300);
    const called = new Set(ok.map((e) => e.operationId));
    expect(COVERED_OPERATIONS.filter((op) => !called.has(op))).toEqual([]);
  });
});

describeContract(harness);
