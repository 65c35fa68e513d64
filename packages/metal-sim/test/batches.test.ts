// VLAN assignment batches: queued -> in_progress -> completed as the clock advances, effects
// applied only on completion, listing and fetching, failures when the port changed meanwhile.

import { describe, expect, test } from '@jest/globals';
import type { BatchWire, PortVlanAssignmentWire, PortWire } from '../src/wire.js';
import { DEFAULT_DELAYS } from '../src/store.js';
import { createActiveDevice, createVlan, describeContract, portByName, useSimulator, type TestSim } from './support/harness.js';

const sim = useSimulator();
let nextVxlan = 3000;

async function vlan(t: TestSim): Promise<{ id: string; vxlan: number }> {
  const v = await createVlan(t, { vxlan: nextVxlan++ });
  return { id: v.id, vxlan: v.vxlan };
}

type Vlan = Awaited<ReturnType<typeof vlan>>;

/** An active device, two fresh VLANs, and a batch on its bond0 built from them by `items`. */
async function batchOfTwo(items: (a: Vlan, b: Vlan) => Record<string, unknown>[]) {
  const t = sim();
  const d = await createActiveDevice(t);
  const bond0 = portByName(d, 'bond0').id;
  const [a, b] = [await vlan(t), await vlan(t)];
  const created = await t.api.post<BatchWire>(`/ports/${bond0}/vlan-assignments/batches`, { vlan_assignments: items(a, b) });
  return { t, d, bond0, a, b, created };
}

describe('VLAN assignment batches', () => {
  test('a batch moves queued -> in_progress -> completed with the clock, and applies on completion', async () => {
    const { t, bond0, a, b, created } = await batchOfTwo((a, b) => [
      { vlan: a.id, state: 'assigned' },
      { vlan: String(b.vxlan), state: 'assigned' },
    ]);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ state: 'queued', quantity: 2, error_messages: [], port: { href: `/metal/v1/ports/${bond0}` } });
    expect(created.body.vlan_assignments.map((x) => [x.vlan, x.state, x.native])).toEqual([
      [a.vxlan, 'assigned', false],
      [b.vxlan, 'assigned', false],
    ]);
    const get = () => t.api.get<BatchWire>(`/ports/${bond0}/vlan-assignments/batches/${created.body.id}`);

    t.clock.advance(DEFAULT_DELAYS.batchQueuedMs);
    expect((await get()).body.state).toBe('in_progress');
    expect((await t.api.get<PortWire>(`/ports/${bond0}`)).body.virtual_networks).toEqual([]);

    t.clock.advance(DEFAULT_DELAYS.batchInProgressMs);
    expect((await get()).body.state).toBe('completed');
    const port = (await t.api.get<PortWire>(`/ports/${bond0}?include=virtual_networks`)).body;
    expect(port.virtual_networks.map((v) => (v as { vxlan: number }).vxlan)).toEqual([a.vxlan, b.vxlan]);
    expect(port.network_type).toBe('hybrid-bonded');

    const list = await t.api.get<{ batches: BatchWire[] }>(`/ports/${bond0}/vlan-assignments/batches`);
    expect(list.body.batches.map((x) => [x.id, x.state])).toEqual([[created.body.id, 'completed']]);
  });

  test('the port lists its assignments, showing unassigning while a removal batch runs', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const bond0 = portByName(d, 'bond0').id;
    const a = await vlan(t);
    expect((await t.api.post(`/ports/${bond0}/assign`, { vnid: a.id })).status).toBe(200);
    const before = await t.api.get<{ vlan_assignments: PortVlanAssignmentWire[] }>(`/ports/${bond0}/vlan-assignments`);
    expect(before.body.vlan_assignments).toMatchObject([{ vlan: a.vxlan, state: 'assigned', native: false }]);
    const one = await t.api.get<PortVlanAssignmentWire>(`/ports/${bond0}/vlan-assignments/${before.body.vlan_assignments[0]?.id ?? ''}`);
    expect(one.body).toMatchObject({ vlan: a.vxlan, virtual_network: { href: `/metal/v1/virtual-networks/${a.id}` } });

    await t.api.post(`/ports/${bond0}/vlan-assignments/batches`, { vlan_assignments: [{ vlan: a.id, state: 'unassigned' }] });
    t.clock.advance(DEFAULT_DELAYS.batchQueuedMs);
    expect(
      (await t.api.get<{ vlan_assignments: PortVlanAssignmentWire[] }>(`/ports/${bond0}/vlan-assignments`)).body.vlan_assignments,
    ).toMatchObject([{ vlan: a.vxlan, state: 'unassigning' }]);
    t.clock.advance(DEFAULT_DELAYS.batchInProgressMs);
    expect((await t.api.get<{ vlan_assignments: unknown[] }>(`/ports/${bond0}/vlan-assignments`)).body.vlan_assignments).toEqual([]);
  });

  test('a batch whose assignment no longer applies when it runs fails with the reason and changes nothing', async () => {
    const { t, bond0, b, created } = await batchOfTwo((a, b) => [
      { vlan: a.id, state: 'assigned' },
      { vlan: b.id, state: 'assigned' },
    ]);
    // Someone assigns one of the VLANs directly before the batch runs.
    expect((await t.api.post(`/ports/${bond0}/assign`, { vnid: b.id })).status).toBe(200);
    t.clock.advance(DEFAULT_DELAYS.batchQueuedMs + DEFAULT_DELAYS.batchInProgressMs);
    const done = await t.api.get<BatchWire>(`/ports/${bond0}/vlan-assignments/batches/${created.body.id}`);
    expect(done.body.state).toBe('failed');
    expect(done.body.error_messages.join(' ')).toContain(`${b.vxlan} is already assigned`);
    const port = (await t.api.get<PortWire>(`/ports/${bond0}`)).body;
    expect(port.virtual_networks).toEqual([{ href: `/metal/v1/virtual-networks/${b.id}` }]);
  });

  test('a native assignment in a batch sets the port native VLAN on an unbonded port', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const eth1 = portByName(d, 'eth1').id;
    await t.api.post(`/ports/${eth1}/disbond`);
    const [a, b] = [await vlan(t), await vlan(t)];
    await t.api.post(`/ports/${eth1}/vlan-assignments/batches`, {
      vlan_assignments: [
        { vlan: a.id, state: 'assigned' },
        { vlan: b.id, state: 'assigned', native: true },
      ],
    });
    t.clock.advance(DEFAULT_DELAYS.batchQueuedMs + DEFAULT_DELAYS.batchInProgressMs);
    expect((await t.api.get<PortWire>(`/ports/${eth1}`)).body.native_virtual_network).toEqual({
      href: `/metal/v1/virtual-networks/${b.id}`,
    });
  });

  test('malformed batches are refused: empty, duplicate VLANs, native on an unassignment, unknown VLAN', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const bond0 = portByName(d, 'bond0').id;
    const a = await vlan(t);
    for (const items of [
      [],
      [
        { vlan: a.id, state: 'assigned' },
        { vlan: String(a.vxlan), state: 'assigned' },
      ],
      [{ vlan: a.id, state: 'unassigned', native: true }],
      [{ vlan: '3999', state: 'assigned' }],
    ]) {
      const res = await t.api.post<{ errors: string[] }>(`/ports/${bond0}/vlan-assignments/batches`, { vlan_assignments: items });
      expect(res.status).toBe(422);
      expect(res.body.errors.length).toBeGreaterThan(0);
    }
    expect((await t.api.get<{ batches: unknown[] }>(`/ports/${bond0}/vlan-assignments/batches`)).body.batches).toEqual([]);
  });

  test('store changes announce the VLANs a port gained, for the data-plane harness', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const bond0 = portByName(d, 'bond0').id;
    const seen: string[] = [];
    const stop = t.sim.store.subscribe((c) => {
      if (c.kind === 'port' && c.portId === bond0) seen.push(c.action);
      if (c.kind === 'batch') seen.push(`batch-${c.action}`);
    });
    const a = await vlan(t);
    await t.api.post(`/ports/${bond0}/vlan-assignments/batches`, { vlan_assignments: [{ vlan: a.id, state: 'assigned' }] });
    t.clock.advance(DEFAULT_DELAYS.batchQueuedMs + DEFAULT_DELAYS.batchInProgressMs);
    stop();
    expect(seen).toEqual(['batch-created', 'batch-state', 'updated', 'batch-state']);
  });
});

describeContract(sim);
