// createIPAssignment (POST /devices/{id}/ips) against the device's network mode and state: an
// elastic IP is routed to bond0's layer 3, so the layer-2 modes and devices that are not active
// refuse it.

import { describe, expect, test } from '@jest/globals';
import type { DeviceWire, IpReservationWire } from '../src/wire.js';
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

const sim = useSimulator();

let nextVxlan = 2700;

async function elasticIp(t: TestSim): Promise<string> {
  const r = await t.api.post<IpReservationWire>(`/projects/${t.projectId}/ips`, { type: 'public_ipv4', metro: 'da', quantity: 1 });
  expect(r.status).toBe(201);
  return r.body.address;
}

async function post(t: TestSim, path: string, body?: unknown): Promise<void> {
  const res = await t.api.post(path, body);
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Puts a fresh active device into one of the five network modes, the documented way. */
async function deviceIn(t: TestSim, mode: string): Promise<DeviceWire> {
  const d = await createActiveDevice(t);
  const bond0 = portByName(d, 'bond0').id;
  const eth1 = portByName(d, 'eth1').id;
  const vxlan = nextVxlan++;
  await createVlan(t, { vxlan });
  if (mode === 'hybrid-bonded') await post(t, `/ports/${bond0}/assign`, { vnid: String(vxlan) });
  if (mode === 'hybrid') await post(t, `/ports/${eth1}/disbond`);
  if (mode === 'layer2-bonded') await post(t, `/ports/${bond0}/convert/layer-2`, { vnid: String(vxlan) });
  if (mode === 'layer2-individual') {
    await post(t, `/ports/${bond0}/convert/layer-2`, {});
    await post(t, `/ports/${bond0}/disbond?bulk_disable=true`);
  }
  t.clock.advance(BATCH_MS);
  const now = (await t.api.get<DeviceWire>(`/devices/${d.id}`)).body;
  expect(now.network_type).toBe(mode);
  return now;
}

describe('createIPAssignment by network mode', () => {
  test.each(['layer3', 'hybrid-bonded', 'hybrid'])('%s: bond0 keeps layer 3, the elastic IP is assigned', async (mode) => {
    const t = sim();
    const d = await deviceIn(t, mode);
    const address = await elasticIp(t);
    const res = await t.api.post(`/devices/${d.id}/ips`, { address });
    expect(res.status).toBe(201);
    expect((await t.api.get<DeviceWire>(`/devices/${d.id}`)).body.ip_addresses.map((a) => a.address)).toContain(address);
  });

  test.each(['layer2-bonded', 'layer2-individual'])('%s: no layer 3 to route to, refused (422)', async (mode) => {
    const t = sim();
    const d = await deviceIn(t, mode);
    const address = await elasticIp(t);
    expectRefusedBy(t, await t.api.post(`/devices/${d.id}/ips`, { address }), 'ip-assignment-needs-layer3');
    expect((await t.api.get<DeviceWire>(`/devices/${d.id}`)).body.ip_addresses).toEqual([]);
  });

  test('a 4-port device with bond1 in layer 2 still takes it on bond0', async () => {
    const t = sim();
    const d = await createActiveDevice(t, { plan: 'n3.xlarge.x86' });
    await post(t, `/ports/${portByName(d, 'bond1').id}/convert/layer-2`, {});
    expect((await t.api.post(`/devices/${d.id}/ips`, { address: await elasticIp(t) })).status).toBe(201);
  });
});

describe('createIPAssignment by device state', () => {
  test('queued and provisioning devices are refused; the same address is taken once the device is active', async () => {
    const t = sim();
    const address = await elasticIp(t);
    const created = await t.api.post<DeviceWire>(`/projects/${t.projectId}/devices`, {
      metro: 'da',
      plan: 'c3.small.x86',
      operating_system: 'ubuntu_22_04',
    });
    expectRefusedBy(t, await t.api.post(`/devices/${created.body.id}/ips`, { address }), 'ip-assignment-device-state');
    t.clock.advance(1_000);
    expect((await t.api.get<DeviceWire>(`/devices/${created.body.id}`)).body.state).toBe('provisioning');
    expectRefusedBy(t, await t.api.post(`/devices/${created.body.id}/ips`, { address }), 'ip-assignment-device-state');
    t.clock.advance(4_000);
    expect((await t.api.post(`/devices/${created.body.id}/ips`, { address })).status).toBe(201);
  });

  test('a deprovisioning device is refused', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    expect((await t.api.delete(`/devices/${d.id}`)).status).toBe(204);
    expectRefusedBy(t, await t.api.post(`/devices/${d.id}/ips`, { address: await elasticIp(t) }), 'ip-assignment-device-state');
  });
});

describeContract(sim);
