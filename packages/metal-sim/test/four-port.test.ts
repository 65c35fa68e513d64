// 4-port plans (n3.xlarge.x86, n2.xlarge.x86): bond0 = eth0+eth2, bond1 = eth1+eth3. Every port
// rule acts on the bond the port belongs to, never on a fixed eth0/eth1 pair.

import { describe, expect, test } from '@jest/globals';
import type { DeviceWire, PortWire } from '../src/wire.js';
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

let nextVxlan = 3000;

async function freshVlan(t: TestSim): Promise<number> {
  const vxlan = nextVxlan++;
  await createVlan(t, { vxlan });
  return vxlan;
}

async function ok(t: TestSim, method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<PortWire> {
  const res = await t.api.call<PortWire>(method, path, body);
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function device(t: TestSim, id: string): Promise<DeviceWire> {
  return (await t.api.get<DeviceWire>(`/devices/${id}`)).body;
}

function fourPort(t: TestSim): Promise<DeviceWire> {
  return createActiveDevice(t, { plan: 'n3.xlarge.x86' });
}

function id(d: DeviceWire, name: string): string {
  return portByName(d, name).id;
}

describe('4-port plans', () => {
  test("hybrid: eth2 (bond0's second port) leaves bond0, eth0 cannot; eth1 and eth3 stay in bond1", async () => {
    const t = sim();
    const d = await fourPort(t);
    const eth2 = await ok(t, 'POST', `/ports/${id(d, 'eth2')}/disbond`);
    expect(eth2.data.bonded).toBe(false);
    expectRefusedBy(t, await t.api.post(`/ports/${id(d, 'eth0')}/disbond`), 'disbond-state');
    const after = await device(t, d.id);
    expect(portByName(after, 'bond0').network_type).toBe('hybrid');
    expect(['eth1', 'eth3'].map((n) => portByName(after, n).data.bonded)).toEqual([true, true]);
    expect(portByName(after, 'bond1').network_type).toBe('layer3');
    const v = await freshVlan(t);
    const assigned = await ok(t, 'POST', `/ports/${id(d, 'eth2')}/assign`, { vnid: String(v) });
    expect(assigned.virtual_networks).toHaveLength(1);
    expectRefusedBy(t, await t.api.post(`/ports/${id(d, 'eth1')}/assign`, { vnid: String(v) }), 'port-carries-vlans');
  });

  test('bond1 converts to layer 2 and carries a VLAN while bond0 keeps its addresses', async () => {
    const t = sim();
    const d = await fourPort(t);
    const addresses = d.ip_addresses.length;
    expect(addresses).toBeGreaterThan(0);
    const v = await freshVlan(t);
    const bond1 = await ok(t, 'POST', `/ports/${id(d, 'bond1')}/convert/layer-2`, { vnid: String(v) });
    expect(bond1.network_type).toBe('layer2-bonded');
    const after = await device(t, d.id);
    expect(after.ip_addresses).toHaveLength(addresses);
    expect(portByName(after, 'bond0').network_type).toBe('layer3');
    expect(after.network_type).toBe('hybrid');
    // bond1 in layer 2 lets eth1 go; eth3 is the last port and bond1 carries a VLAN.
    await ok(t, 'POST', `/ports/${id(d, 'eth1')}/disbond`);
    expectRefusedBy(t, await t.api.post(`/ports/${id(d, 'eth3')}/disbond`), 'disbond-state');
    // back: unassign, bond, layer 3; bond1 gets no addresses of its own.
    await ok(t, 'POST', `/ports/${id(d, 'bond1')}/unassign`, { vnid: String(v) });
    await ok(t, 'POST', `/ports/${id(d, 'eth1')}/bond`);
    const l3 = await ok(t, 'POST', `/ports/${id(d, 'bond1')}/convert/layer-3`, {});
    expect(l3.network_type).toBe('layer3');
    const back = await device(t, d.id);
    expect(back.ip_addresses).toHaveLength(addresses);
    expect(back.network_type).toBe('layer3');
  });

  test('bond1 in layer 3 keeps eth1 like bond0 keeps eth0 (a guess: the stricter reading); eth3 may go', async () => {
    const t = sim();
    const d = await fourPort(t);
    expect(['eth0', 'eth1', 'eth2', 'eth3'].map((n) => portByName(d, n).disbond_operation_supported)).toEqual([false, false, true, true]);
    expectRefusedBy(t, await t.api.post(`/ports/${id(d, 'eth1')}/disbond`), 'disbond-state');
    const eth3 = await ok(t, 'POST', `/ports/${id(d, 'eth3')}/disbond`);
    expect(eth3.data.bonded).toBe(false);
    const after = await device(t, d.id);
    expect([after.network_type, portByName(after, 'bond0').network_type, portByName(after, 'bond1').network_type]).toEqual([
      'hybrid',
      'layer3',
      'hybrid',
    ]);
  });

  test('the metadata service follows bond0: reachable with bond1 in layer 2, gone once bond0 is', async () => {
    const t = sim();
    const d = await fourPort(t);
    await ok(t, 'POST', `/ports/${id(d, 'bond1')}/convert/layer-2`, {});
    expect((await fetch(t.sim.metadataUrl(d.id))).status).toBe(200);
    await ok(t, 'POST', `/ports/${id(d, 'bond0')}/convert/layer-2`, {});
    expect((await device(t, d.id)).network_type).toBe('layer2-bonded');
    expect((await fetch(t.sim.metadataUrl(d.id))).status).toBe(404);
  });

  test('bulk disbond on eth3 acts on bond1 only', async () => {
    const t = sim();
    const d = await fourPort(t);
    await ok(t, 'POST', `/ports/${id(d, 'bond1')}/convert/layer-2`, {});
    await ok(t, 'POST', `/ports/${id(d, 'eth3')}/disbond?bulk_disable=true`);
    const after = await device(t, d.id);
    expect(['eth0', 'eth1', 'eth2', 'eth3'].map((n) => portByName(after, n).data.bonded)).toEqual([true, false, true, false]);
    expect(portByName(after, 'bond1').network_type).toBe('layer2-individual');
  });

  test('a batch on eth3 and a native VLAN on bond1', async () => {
    const t = sim();
    const d = await fourPort(t);
    const [a, b] = [await freshVlan(t), await freshVlan(t)];
    await ok(t, 'POST', `/ports/${id(d, 'bond1')}/convert/layer-2`, {});
    await ok(t, 'POST', `/ports/${id(d, 'bond1')}/assign`, { vnid: String(a) });
    await ok(t, 'POST', `/ports/${id(d, 'bond1')}/native-vlan?vnid=${a}`);
    await ok(t, 'POST', `/ports/${id(d, 'eth2')}/disbond`);
    const created = await t.api.post(`/ports/${id(d, 'eth2')}/vlan-assignments/batches`, { vlan_assignments: [{ vlan: String(b) }] });
    expect(created.status).toBe(201);
    t.clock.advance(BATCH_MS);
    const after = await device(t, d.id);
    expect(portByName(after, 'eth2').virtual_networks).toHaveLength(1);
    expect(portByName(after, 'bond1').native_virtual_network).toBeDefined();
  });

  test('the metadata document lists four interfaces with their bonds', async () => {
    const t = sim();
    const d = await fourPort(t);
    await ok(t, 'POST', `/ports/${id(d, 'eth3')}/disbond`);
    const res = await fetch(t.sim.metadataUrl(d.id));
    const doc = (await res.json()) as { network: { interfaces: { name: string; bond: string | null }[] } };
    expect(doc.network.interfaces.map((i) => [i.name, i.bond])).toEqual([
      ['eth0', 'bond0'],
      ['eth1', 'bond1'],
      ['eth2', 'bond0'],
      ['eth3', null],
    ]);
  });
});

describeContract(sim);
