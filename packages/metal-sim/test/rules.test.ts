// One named case per rule the simulator enforces, each driven over HTTP and checked to be refused
// (422, `{"errors": [...]}`) by that rule and no other, with the state left as it was.

import { describe, expect, test } from '@jest/globals';
import type { DeviceWire, PortWire, VrfWire } from '../src/wire.js';
import {
  BATCH_MS,
  createActiveDevice,
  createVlan,
  describeContract,
  expectRefusedBy,
  portByName,
  useSimulator,
  type TestSim,
} from './support/harness.js';

const sim = useSimulator({
  seedConfig: {
    metros: [{ code: 'da' }, { code: 'sv' }],
    plans: [{ slug: 'c3.small.x86', ports: 2 }],
    projects: [{ name: 'alpha' }, { name: 'beta' }],
    tokens: [{ token: 'sim-token' }],
    limits: { vrfsPerProject: 2 },
  },
});

let nextVxlan = 100;
/** A fresh vxlan per test so cases never collide. */
function vx(): number {
  return nextVxlan++;
}

async function port(t: TestSim, portId: string): Promise<PortWire> {
  return (await t.api.get<PortWire>(`/ports/${portId}`)).body;
}

async function assign(t: TestSim, portId: string, vnid: string | number) {
  return t.api.post(`/ports/${portId}/assign`, { vnid: String(vnid) });
}

async function hybridBonded(t: TestSim): Promise<{ device: DeviceWire; bond0: PortWire; vxlan: number }> {
  const device = await createActiveDevice(t);
  const vxlan = vx();
  await createVlan(t, { vxlan });
  const bond0 = portByName(device, 'bond0');
  expect((await assign(t, bond0.id, vxlan)).status).toBe(200);
  return { device, bond0, vxlan };
}

async function layer2Bonded(t: TestSim): Promise<{ device: DeviceWire; bond0: PortWire }> {
  const device = await createActiveDevice(t);
  const bond0 = portByName(device, 'bond0');
  expect((await t.api.post(`/ports/${bond0.id}/convert/layer-2`, {})).status).toBe(200);
  return { device, bond0 };
}

async function createVrf(t: TestSim, body: Record<string, unknown>) {
  return t.api.post<VrfWire>(`/projects/${t.projectId}/vrfs`, { name: `vrf-${vx()}`, metro: 'da', ...body });
}

describe('VLAN rules', () => {
  test('vlan-metro-local: assigning a VLAN from another metro fails, by UUID and by vxlan', async () => {
    const t = sim();
    const device = await createActiveDevice(t, { metro: 'da' });
    const vxlan = vx();
    const svVlan = await createVlan(t, { metro: 'sv', vxlan });
    const bond0 = portByName(device, 'bond0');
    expectRefusedBy(t, await assign(t, bond0.id, svVlan.id), 'vlan-metro-local');
    expectRefusedBy(t, await assign(t, bond0.id, vxlan), 'vlan-metro-local');
    expectRefusedBy(
      t,
      await t.api.post(`/ports/${bond0.id}/vlan-assignments/batches`, { vlan_assignments: [{ vlan: svVlan.id, state: 'assigned' }] }),
      'vlan-metro-local',
    );
    expect((await port(t, bond0.id)).virtual_networks).toEqual([]);
  });

  test('vxlan-unique-per-project-metro: a second VLAN with the same vxlan in the same metro fails; other metros and projects may reuse it', async () => {
    const t = sim();
    const vxlan = vx();
    await createVlan(t, { vxlan, metro: 'da' });
    expectRefusedBy(
      t,
      await t.api.post(`/projects/${t.projectId}/virtual-networks`, { metro: 'da', vxlan }),
      'vxlan-unique-per-project-metro',
    );
    expect((await t.api.post(`/projects/${t.projectId}/virtual-networks`, { metro: 'sv', vxlan })).status).toBe(201);
    const beta = [...t.sim.store.projects.values()].find((p) => p.name === 'beta');
    expect((await t.api.post(`/projects/${beta?.id ?? ''}/virtual-networks`, { metro: 'da', vxlan })).status).toBe(201);
  });

  test('vxlan-range: a vxlan outside 2-3999 fails', async () => {
    const t = sim();
    for (const vxlan of [1, 4000]) {
      expectRefusedBy(t, await t.api.post(`/projects/${t.projectId}/virtual-networks`, { metro: 'da', vxlan }), 'vxlan-range');
    }
  });

  test('vlan-delete-in-use: deleting a VLAN assigned to a port or serving a Metal Gateway fails', async () => {
    const t = sim();
    const { bond0, vxlan } = await hybridBonded(t);
    const assigned = (await port(t, bond0.id)).virtual_networks[0];
    const vlanId =
      t.sim.store.vlans.size > 0 ? [...t.sim.store.vlans.values()].find((v) => v.vxlan === vxlan && v.metroCode === 'da')?.id : undefined;
    expect(assigned?.href).toBe(`/metal/v1/virtual-networks/${vlanId}`);
    expectRefusedBy(t, await t.api.delete(`/virtual-networks/${vlanId}`), 'vlan-delete-in-use');

    const gwVlan = await createVlan(t, { vxlan: vx() });
    expect(
      (await t.api.post(`/projects/${t.projectId}/metal-gateways`, { virtual_network_id: gwVlan.id, private_ipv4_subnet_size: 8 })).status,
    ).toBe(201);
    expectRefusedBy(t, await t.api.delete(`/virtual-networks/${gwVlan.id}`), 'vlan-delete-in-use');

    const free = await createVlan(t, { vxlan: vx() });
    expect((await t.api.delete(`/virtual-networks/${free.id}`)).status).toBe(204);
  });
});

describe('port rules', () => {
  test('layer3-needs-vlans-unassigned: converting a bond with VLANs to layer 3 fails', async () => {
    const t = sim();
    const { bond0 } = await layer2Bonded(t);
    const vxlan = vx();
    await createVlan(t, { vxlan });
    expect((await assign(t, bond0.id, vxlan)).status).toBe(200);
    expectRefusedBy(t, await t.api.post(`/ports/${bond0.id}/convert/layer-3`, {}), 'layer3-needs-vlans-unassigned');
    expect((await port(t, bond0.id)).network_type).toBe('layer2-bonded');
  });

  test('native-vlan-assigned: a native VLAN that is not assigned to the port fails', async () => {
    const t = sim();
    const device = await createActiveDevice(t);
    const eth1 = portByName(device, 'eth1');
    expect((await t.api.post(`/ports/${eth1.id}/disbond`)).status).toBe(200);
    const a = vx();
    const b = vx();
    await createVlan(t, { vxlan: a });
    await createVlan(t, { vxlan: b });
    expect((await assign(t, eth1.id, a)).status).toBe(200);
    expectRefusedBy(t, await t.api.post(`/ports/${eth1.id}/native-vlan?vnid=${b}`), 'native-vlan-assigned');
    expect((await t.api.post(`/ports/${eth1.id}/native-vlan?vnid=${a}`)).status).toBe(200);
    expect((await t.api.get<PortWire>(`/ports/${eth1.id}?include=native_virtual_network`)).body.native_virtual_network).toMatchObject({
      vxlan: a,
    });
  });

  test('native-vlan-port-mode: a native VLAN on a layer-3 (hybrid bonded) bond fails', async () => {
    const t = sim();
    const { bond0, vxlan } = await hybridBonded(t);
    expectRefusedBy(t, await t.api.post(`/ports/${bond0.id}/native-vlan?vnid=${vxlan}`), 'native-vlan-port-mode');
  });

  test('convert-bond-port-only: converting a physical port fails', async () => {
    const t = sim();
    const device = await createActiveDevice(t);
    expectRefusedBy(t, await t.api.post(`/ports/${portByName(device, 'eth1').id}/convert/layer-2`, {}), 'convert-bond-port-only');
  });

  test('convert-layer2-state: converting a layer-2 bond to layer 2 again fails', async () => {
    const t = sim();
    const { bond0 } = await layer2Bonded(t);
    expectRefusedBy(t, await t.api.post(`/ports/${bond0.id}/convert/layer-2`, {}), 'convert-layer2-state');
  });

  test('convert-layer3-state: converting a layer-3 bond, or a layer-2 bond with unbonded ports, to layer 3 fails', async () => {
    const t = sim();
    const device = await createActiveDevice(t);
    expectRefusedBy(t, await t.api.post(`/ports/${portByName(device, 'bond0').id}/convert/layer-3`, {}), 'convert-layer3-state');
    const { bond0 } = await layer2Bonded(t);
    expect((await t.api.post(`/ports/${bond0.id}/disbond?bulk_disable=true`)).status).toBe(200);
    expectRefusedBy(t, await t.api.post(`/ports/${bond0.id}/convert/layer-3`, {}), 'convert-layer3-state');
  });

  test('bond-state: bonding a bonded port, or a port that still carries VLANs, fails', async () => {
    const t = sim();
    const device = await createActiveDevice(t);
    const eth1 = portByName(device, 'eth1');
    expectRefusedBy(t, await t.api.post(`/ports/${eth1.id}/bond`), 'bond-state');
    expect((await t.api.post(`/ports/${eth1.id}/disbond`)).status).toBe(200);
    const vxlan = vx();
    await createVlan(t, { vxlan });
    expect((await assign(t, eth1.id, vxlan)).status).toBe(200);
    expectRefusedBy(t, await t.api.post(`/ports/${eth1.id}/bond`), 'bond-state');
    expect((await port(t, eth1.id)).data.bonded).toBe(false);
  });

  test('disbond-state: eth0 cannot leave a layer-3 bond, a disbonded port cannot disbond, a layer-2 bond with VLANs cannot lose all ports', async () => {
    const t = sim();
    const device = await createActiveDevice(t);
    expectRefusedBy(t, await t.api.post(`/ports/${portByName(device, 'eth0').id}/disbond`), 'disbond-state');
    expectRefusedBy(t, await t.api.post(`/ports/${portByName(device, 'bond0').id}/disbond?bulk_disable=true`), 'disbond-state');
    const eth1 = portByName(device, 'eth1');
    expect((await t.api.post(`/ports/${eth1.id}/disbond`)).status).toBe(200);
    expectRefusedBy(t, await t.api.post(`/ports/${eth1.id}/disbond`), 'disbond-state');

    const { bond0 } = await layer2Bonded(t);
    const vxlan = vx();
    await createVlan(t, { vxlan });
    expect((await assign(t, bond0.id, vxlan)).status).toBe(200);
    expectRefusedBy(t, await t.api.post(`/ports/${bond0.id}/disbond?bulk_disable=true`), 'disbond-state');
  });

  test('port-carries-vlans: a VLAN on a bonded physical port, or on a bond without bonded ports, fails', async () => {
    const t = sim();
    const device = await createActiveDevice(t);
    const vxlan = vx();
    await createVlan(t, { vxlan });
    expectRefusedBy(t, await assign(t, portByName(device, 'eth1').id, vxlan), 'port-carries-vlans');
    const { bond0 } = await layer2Bonded(t);
    expect((await t.api.post(`/ports/${bond0.id}/disbond?bulk_disable=true`)).status).toBe(200);
    expectRefusedBy(t, await assign(t, bond0.id, vxlan), 'port-carries-vlans');
  });

  test('vlan-assignment-state: assigning a VLAN twice or removing one that is not assigned fails', async () => {
    const t = sim();
    const { bond0, vxlan } = await hybridBonded(t);
    expectRefusedBy(t, await assign(t, bond0.id, vxlan), 'vlan-assignment-state');
    const other = vx();
    await createVlan(t, { vxlan: other });
    expectRefusedBy(t, await t.api.post(`/ports/${bond0.id}/unassign`, { vnid: String(other) }), 'vlan-assignment-state');
  });

  test('network-frozen: every port change on a device with network_frozen fails', async () => {
    const t = sim();
    const device = await createActiveDevice(t, { network_frozen: true });
    const vxlan = vx();
    await createVlan(t, { vxlan });
    const bond0 = portByName(device, 'bond0');
    const eth1 = portByName(device, 'eth1');
    expectRefusedBy(t, await t.api.post(`/ports/${bond0.id}/convert/layer-2`, {}), 'network-frozen');
    expectRefusedBy(t, await t.api.post(`/ports/${eth1.id}/disbond`), 'network-frozen');
    expectRefusedBy(t, await assign(t, bond0.id, vxlan), 'network-frozen');
    expectRefusedBy(
      t,
      await t.api.post(`/ports/${bond0.id}/vlan-assignments/batches`, { vlan_assignments: [{ vlan: String(vxlan), state: 'assigned' }] }),
      'network-frozen',
    );
    expect((await t.api.put(`/devices/${device.id}`, { network_frozen: false })).status).toBe(200);
    expect((await assign(t, bond0.id, vxlan)).status).toBe(200);
  });

  test('device-active: port changes before the device is active fail', async () => {
    const t = sim();
    const created = await t.api.post<DeviceWire>(`/projects/${t.projectId}/devices`, {
      metro: 'da',
      plan: 'c3.small.x86',
      operating_system: 'ubuntu_22_04',
    });
    expectRefusedBy(t, await t.api.post(`/ports/${portByName(created.body, 'eth1').id}/disbond`), 'device-active');
  });

  test('one-batch-per-port: a second VLAN batch while one is in progress fails', async () => {
    const t = sim();
    const device = await createActiveDevice(t);
    const bond0 = portByName(device, 'bond0');
    const [a, b] = [vx(), vx()];
    await createVlan(t, { vxlan: a });
    await createVlan(t, { vxlan: b });
    expect(
      (await t.api.post(`/ports/${bond0.id}/vlan-assignments/batches`, { vlan_assignments: [{ vlan: String(a), state: 'assigned' }] }))
        .status,
    ).toBe(201);
    expectRefusedBy(
      t,
      await t.api.post(`/ports/${bond0.id}/vlan-assignments/batches`, { vlan_assignments: [{ vlan: String(b), state: 'assigned' }] }),
      'one-batch-per-port',
    );
    t.clock.advance(BATCH_MS);
    expect(
      (await t.api.post(`/ports/${bond0.id}/vlan-assignments/batches`, { vlan_assignments: [{ vlan: String(b), state: 'assigned' }] }))
        .status,
    ).toBe(201);
    t.clock.advance(BATCH_MS);
  });
});

describe('VRF, reservation and gateway rules', () => {
  test('vrf-ip-ranges: IPv4 ranges outside /8-/29, IPv6 outside /59-/64, host bits set, or overlapping ranges fail', async () => {
    const t = sim();
    for (const ranges of [
      ['10.0.0.0/7'],
      ['10.0.0.0/30'],
      ['2001:db8::/58'],
      ['2001:db8::/65'],
      ['10.0.1.0/16'],
      ['10.0.0.0/16', '10.0.5.0/24'],
      ['nonsense'],
    ]) {
      expectRefusedBy(t, await createVrf(t, { ip_ranges: ranges }), 'vrf-ip-ranges');
    }
    const ok = await createVrf(t, { ip_ranges: ['10.0.0.0/8', '192.168.0.0/29', '2001:db8::/59'] });
    expect(ok.status).toBe(201);
    await t.api.delete(`/vrfs/${ok.body.id}`);
  });

  test('vrf-quota: more VRFs than the project limit fail', async () => {
    const t = sim();
    const made = [await createVrf(t, {}), await createVrf(t, {})];
    expect(made.map((m) => m.status)).toEqual([201, 201]);
    expectRefusedBy(t, await createVrf(t, {}), 'vrf-quota');
    for (const m of made) expect((await t.api.delete(`/vrfs/${m.body.id}`)).status).toBe(204);
  });

  test('vrf-reservation-size: VRF reservations must be /22-/29 (IPv4) or /64 (IPv6)', async () => {
    const t = sim();
    const vrf = (await createVrf(t, { ip_ranges: ['10.10.0.0/16', '2001:db8:1::/59'] })).body;
    for (const [network, cidr] of [
      ['10.10.0.0', 21],
      ['10.10.0.0', 30],
      ['2001:db8:1::', 63],
    ] as const) {
      expectRefusedBy(
        t,
        await t.api.post(`/projects/${t.projectId}/ips`, { type: 'vrf', vrf_id: vrf.id, network, cidr }),
        'vrf-reservation-size',
      );
    }
    await t.api.delete(`/vrfs/${vrf.id}`);
  });

  test('vrf-reservation-in-range: a reservation outside every VRF range fails', async () => {
    const t = sim();
    const vrf = (await createVrf(t, { ip_ranges: ['10.20.0.0/16'] })).body;
    expectRefusedBy(
      t,
      await t.api.post(`/projects/${t.projectId}/ips`, { type: 'vrf', vrf_id: vrf.id, network: '10.21.0.0', cidr: 24 }),
      'vrf-reservation-in-range',
    );
    await t.api.delete(`/vrfs/${vrf.id}`);
  });

  test('vrf-reservation-overlap: a reservation overlapping another of the same VRF fails', async () => {
    const t = sim();
    const vrf = (await createVrf(t, { ip_ranges: ['10.30.0.0/16'] })).body;
    expect((await t.api.post(`/projects/${t.projectId}/ips`, { type: 'vrf', vrf_id: vrf.id, network: '10.30.0.0', cidr: 24 })).status).toBe(
      201,
    );
    expectRefusedBy(
      t,
      await t.api.post(`/projects/${t.projectId}/ips`, { type: 'vrf', vrf_id: vrf.id, network: '10.30.0.0', cidr: 23 }),
      'vrf-reservation-overlap',
    );
    await t.api.delete(`/vrfs/${vrf.id}`);
  });

  test('one-metal-gateway-per-vlan: a second Metal Gateway on a VLAN fails', async () => {
    const t = sim();
    const vlan = await createVlan(t, { vxlan: vx() });
    expect(
      (await t.api.post(`/projects/${t.projectId}/metal-gateways`, { virtual_network_id: vlan.id, private_ipv4_subnet_size: 8 })).status,
    ).toBe(201);
    expectRefusedBy(
      t,
      await t.api.post(`/projects/${t.projectId}/metal-gateways`, { virtual_network_id: vlan.id, private_ipv4_subnet_size: 8 }),
      'one-metal-gateway-per-vlan',
    );
  });

  test('metal-gateway-same-metro: a gateway joining a VLAN and a reservation of different metros fails', async () => {
    const t = sim();
    const vrf = (await createVrf(t, { metro: 'sv', ip_ranges: ['10.40.0.0/16'] })).body;
    const r = await t.api.post<{ id: string }>(`/projects/${t.projectId}/ips`, {
      type: 'vrf',
      vrf_id: vrf.id,
      network: '10.40.1.0',
      cidr: 24,
    });
    const vlan = await createVlan(t, { metro: 'da', vxlan: vx() });
    expectRefusedBy(
      t,
      await t.api.post(`/projects/${t.projectId}/metal-gateways`, { virtual_network_id: vlan.id, ip_reservation_id: r.body.id }),
      'metal-gateway-same-metro',
    );
    await t.api.delete(`/vrfs/${vrf.id}`);
  });

  test('metal-gateway-reservation: a reservation already behind a gateway, or a public block outside /29-/25, fails', async () => {
    const t = sim();
    const vrf = (await createVrf(t, { ip_ranges: ['10.50.0.0/16'] })).body;
    const r = await t.api.post<{ id: string }>(`/projects/${t.projectId}/ips`, {
      type: 'vrf',
      vrf_id: vrf.id,
      network: '10.50.1.0',
      cidr: 24,
    });
    const [v1, v2, v3] = [await createVlan(t, { vxlan: vx() }), await createVlan(t, { vxlan: vx() }), await createVlan(t, { vxlan: vx() })];
    expect(
      (await t.api.post(`/projects/${t.projectId}/metal-gateways`, { virtual_network_id: v1.id, ip_reservation_id: r.body.id })).status,
    ).toBe(201);
    expectRefusedBy(
      t,
      await t.api.post(`/projects/${t.projectId}/metal-gateways`, { virtual_network_id: v2.id, ip_reservation_id: r.body.id }),
      'metal-gateway-reservation',
    );
    const small = await t.api.post<{ id: string }>(`/projects/${t.projectId}/ips`, { type: 'public_ipv4', metro: 'da', quantity: 4 });
    expect(small.status).toBe(201);
    expectRefusedBy(
      t,
      await t.api.post(`/projects/${t.projectId}/metal-gateways`, { virtual_network_id: v3.id, ip_reservation_id: small.body.id }),
      'metal-gateway-reservation',
    );
    await t.api.delete(`/vrfs/${vrf.id}`);
  });

  test('metal-gateway-private-subnet-size: a private subnet size other than 8, 16, 32, 64, 128 fails', async () => {
    const t = sim();
    const vlan = await createVlan(t, { vxlan: vx() });
    expectRefusedBy(
      t,
      await t.api.post(`/projects/${t.projectId}/metal-gateways`, { virtual_network_id: vlan.id, private_ipv4_subnet_size: 12 }),
      'metal-gateway-private-subnet-size',
    );
  });
});

describeContract(sim);
