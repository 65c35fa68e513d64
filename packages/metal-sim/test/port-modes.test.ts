// Every network-mode transition of capp-layer2-metal.md (c.1), there and back, in the documented
// call order, with the network_type the API reports after each step.

import { describe, expect, test } from '@jest/globals';
import type { DeviceWire, PortWire } from '../src/wire.js';
import { BATCH_MS, createActiveDevice, createVlan, describeContract, portByName, useSimulator, type TestSim } from './support/harness.js';

const sim = useSimulator();

let nextVxlan = 2000;

async function freshVlans(t: TestSim, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const vxlan = nextVxlan++;
    await createVlan(t, { vxlan });
    out.push(vxlan);
  }
  return out;
}

async function ok(t: TestSim, method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<PortWire> {
  const res = await t.api.call<PortWire>(method, path, body);
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function device(t: TestSim, id: string): Promise<DeviceWire> {
  return (await t.api.get<DeviceWire>(`/devices/${id}`)).body;
}

async function batch(
  t: TestSim,
  portId: string,
  items: { vlan: string; state: 'assigned' | 'unassigned'; native?: boolean }[],
): Promise<void> {
  const created = await t.api.post<{ id: string }>(`/ports/${portId}/vlan-assignments/batches`, { vlan_assignments: items });
  expect(created.status).toBe(201);
  t.clock.advance(BATCH_MS);
  const done = await t.api.get<{ state: string; error_messages: string[] }>(`/ports/${portId}/vlan-assignments/batches/${created.body.id}`);
  expect(done.body).toMatchObject({ state: 'completed', error_messages: [] });
}

function types(d: DeviceWire): Record<string, unknown> {
  return {
    device: d.network_type,
    bond0: portByName(d, 'bond0').network_type,
    eth0: portByName(d, 'eth0').data.bonded,
    eth1: portByName(d, 'eth1').data.bonded,
  };
}

describe('network mode transitions', () => {
  test('layer3 -> hybrid-bonded by assigning a VLAN to bond0, and back by unassigning it', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const [v] = await freshVlans(t, 1);
    const bond0 = portByName(d, 'bond0').id;
    const after = await ok(t, 'POST', `/ports/${bond0}/assign`, { vnid: String(v) });
    expect(after.network_type).toBe('hybrid-bonded');
    expect((await device(t, d.id)).ip_addresses).toHaveLength(3);
    expect((await ok(t, 'POST', `/ports/${bond0}/unassign`, { vnid: String(v) })).network_type).toBe('layer3');
  });

  test('layer3 -> hybrid (eth1 unbonded) with a native VLAN, and back', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const [a, b] = await freshVlans(t, 2);
    const eth1 = portByName(d, 'eth1').id;
    await ok(t, 'POST', `/ports/${eth1}/disbond?bulk_disable=false`);
    await batch(t, eth1, [
      { vlan: String(a), state: 'assigned' },
      { vlan: String(b), state: 'assigned' },
    ]);
    await ok(t, 'POST', `/ports/${eth1}/native-vlan?vnid=${a}`);
    const hybrid = await device(t, d.id);
    expect(types(hybrid)).toEqual({ device: 'hybrid', bond0: 'hybrid', eth0: true, eth1: false });
    expect(hybrid.ip_addresses).toHaveLength(3);

    await ok(t, 'DELETE', `/ports/${eth1}/native-vlan`);
    await batch(t, eth1, [
      { vlan: String(a), state: 'unassigned' },
      { vlan: String(b), state: 'unassigned' },
    ]);
    await ok(t, 'POST', `/ports/${eth1}/bond?bulk_enable=false`);
    expect(types(await device(t, d.id))).toEqual({ device: 'layer3', bond0: 'layer3', eth0: true, eth1: true });
  });

  test('layer3 -> layer2-bonded removes the addresses; back to layer3 assigns new ones', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const before = d.ip_addresses.map((a) => a.address);
    const [v] = await freshVlans(t, 1);
    const bond0 = portByName(d, 'bond0').id;
    await ok(t, 'POST', `/ports/${bond0}/convert/layer-2`, {});
    await ok(t, 'POST', `/ports/${bond0}/assign`, { vnid: String(v) });
    const l2 = await device(t, d.id);
    expect(types(l2)).toEqual({ device: 'layer2-bonded', bond0: 'layer2-bonded', eth0: true, eth1: true });
    expect(l2.ip_addresses).toEqual([]);

    await ok(t, 'POST', `/ports/${bond0}/unassign`, { vnid: String(v) });
    await ok(t, 'POST', `/ports/${bond0}/convert/layer-3`, {
      request_ips: [
        { address_family: 4, public: true },
        { address_family: 4, public: false },
        { address_family: 6, public: true },
      ],
    });
    const l3 = await device(t, d.id);
    expect(types(l3)).toEqual({ device: 'layer3', bond0: 'layer3', eth0: true, eth1: true });
    expect(l3.ip_addresses).toHaveLength(3);
    expect(l3.ip_addresses.map((a) => a.address).some((a) => before.includes(a))).toBe(false);
  });

  test('layer3 -> layer2-individual (convert, bulk disbond, VLAN per port), and back', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const [a, b, c] = await freshVlans(t, 3);
    const bond0 = portByName(d, 'bond0').id;
    const eth0 = portByName(d, 'eth0').id;
    const eth1 = portByName(d, 'eth1').id;
    await ok(t, 'POST', `/ports/${bond0}/convert/layer-2`, {});
    await ok(t, 'POST', `/ports/${bond0}/disbond?bulk_disable=true`);
    await ok(t, 'POST', `/ports/${eth0}/assign`, { vnid: String(a) });
    await batch(t, eth1, [
      { vlan: String(b), state: 'assigned', native: true },
      { vlan: String(c), state: 'assigned' },
    ]);
    const l2i = await device(t, d.id);
    expect(types(l2i)).toEqual({ device: 'layer2-individual', bond0: 'layer2-individual', eth0: false, eth1: false });
    expect(portByName(l2i, 'bond0').data.bonded).toBe(false);
    expect(portByName(l2i, 'bond0').disbond_operation_supported).toBe(true);

    await ok(t, 'DELETE', `/ports/${eth1}/native-vlan`);
    await ok(t, 'POST', `/ports/${eth0}/unassign`, { vnid: String(a) });
    await batch(t, eth1, [
      { vlan: String(b), state: 'unassigned' },
      { vlan: String(c), state: 'unassigned' },
    ]);
    await ok(t, 'POST', `/ports/${bond0}/bond?bulk_enable=true`);
    expect(types(await device(t, d.id))['device']).toBe('layer2-bonded');
    await ok(t, 'POST', `/ports/${bond0}/convert/layer-3`, {});
    const back = await device(t, d.id);
    expect(types(back)).toEqual({ device: 'layer3', bond0: 'layer3', eth0: true, eth1: true });
    expect(back.ip_addresses).toHaveLength(3);
  });

  test('convert to layer 2 with a vnid assigns the VLAN in the same call', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const [v] = await freshVlans(t, 1);
    const port = await ok(t, 'POST', `/ports/${portByName(d, 'bond0').id}/convert/layer-2?include=virtual_networks`, { vnid: String(v) });
    expect(port.network_type).toBe('layer2-bonded');
    expect(port.virtual_networks).toMatchObject([{ vxlan: v }]);
  });

  test('port VLANs are {href} links unless included', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const [v] = await freshVlans(t, 1);
    const bond0 = portByName(d, 'bond0').id;
    await ok(t, 'POST', `/ports/${bond0}/assign`, { vnid: String(v) });
    const plain = (await t.api.get<PortWire>(`/ports/${bond0}`)).body.virtual_networks[0];
    expect(Object.keys(plain ?? {})).toEqual(['href']);
    const full = (await t.api.get<PortWire>(`/ports/${bond0}?include=virtual_networks`)).body.virtual_networks[0];
    expect(full).toMatchObject({ vxlan: v, metro_code: 'da' });
    const viaDevice = (await t.api.get<DeviceWire>(`/devices/${d.id}?include=network_ports.virtual_networks`)).body;
    expect(portByName(viaDevice, 'bond0').virtual_networks[0]).toMatchObject({ vxlan: v });
  });
});

describeContract(sim);
