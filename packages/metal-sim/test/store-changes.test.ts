// The store tells its listeners (the data-plane harness, tests) of every change an API call makes,
// cascades included: the store's methods make the change and announce it in one place, so no route
// can change state and forget to say so.

import { describe, expect, test } from '@jest/globals';
import { DEFAULT_DELAYS, type StoreChange } from '../src/store.js';
import type { IpAssignmentWire, IpReservationWire, MetalGatewayWire, VrfWire } from '../src/wire.js';
import { createActiveDevice, createVlan, describeContract, portByName, useSimulator, type TestSim } from './support/harness.js';

const sim = useSimulator();

/** The changes `act` caused, as `kind action` strings (ids left out: they differ per run). */
async function changesOf(t: TestSim, act: () => Promise<unknown>): Promise<string[]> {
  const seen: StoreChange[] = [];
  const stop = t.sim.store.subscribe((c) => seen.push(c));
  try {
    await act();
  } finally {
    stop();
  }
  return seen.map((c) => `${c.kind} ${c.action}`);
}

async function ok<T>(t: TestSim, method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const res = await t.api.call<T>(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

describe('store changes', () => {
  test('virtual networks: created, updated, deleted', async () => {
    const t = sim();
    let id = '';
    expect(await changesOf(t, async () => (id = (await createVlan(t, { vxlan: 1500 })).id))).toEqual(['virtual-network created']);
    expect(await changesOf(t, () => ok(t, 'PUT', `/virtual-networks/${id}`, { description: 'x' }))).toEqual(['virtual-network updated']);
    expect(await changesOf(t, () => ok(t, 'DELETE', `/virtual-networks/${id}`))).toEqual(['virtual-network deleted']);
  });

  test('a gateway with its own private block: the block is announced with it, and goes with it', async () => {
    const t = sim();
    const vlan = await createVlan(t, { vxlan: 1501 });
    let gw = '';
    const created = await changesOf(t, async () => {
      const body = { virtual_network_id: vlan.id, private_ipv4_subnet_size: 8 };
      gw = (await ok<MetalGatewayWire>(t, 'POST', `/projects/${t.projectId}/metal-gateways`, body)).id;
    });
    expect(created).toEqual(['ip-reservation created', 'metal-gateway created']);
    expect(await changesOf(t, () => ok(t, 'DELETE', `/metal-gateways/${gw}`))).toEqual(['metal-gateway deleted', 'ip-reservation deleted']);
  });

  test('a VRF: narrowing its ranges and deleting it take reservations and gateways along, each announced', async () => {
    const t = sim();
    const vrf = await ok<VrfWire>(t, 'POST', `/projects/${t.projectId}/vrfs`, {
      name: 'changes',
      metro: 'da',
      ip_ranges: ['192.168.0.0/16', '10.10.0.0/16'],
    });
    const reserve = (network: string) =>
      ok<IpReservationWire>(t, 'POST', `/projects/${t.projectId}/ips`, { type: 'vrf', vrf_id: vrf.id, network, cidr: 24 });
    const inner = await reserve('192.168.1.0');
    await reserve('10.10.1.0');
    const vlan = await createVlan(t, { vxlan: 1502 });
    await ok(t, 'POST', `/projects/${t.projectId}/metal-gateways`, { virtual_network_id: vlan.id, ip_reservation_id: inner.id });
    const narrowed = await changesOf(t, () => ok(t, 'PUT', `/vrfs/${vrf.id}`, { ip_ranges: ['10.10.0.0/16'] }));
    expect(narrowed).toEqual(['metal-gateway deleted', 'ip-reservation deleted', 'vrf updated']);
    expect(await changesOf(t, () => ok(t, 'DELETE', `/vrfs/${vrf.id}`))).toEqual(['ip-reservation deleted', 'vrf deleted']);
  });

  test('a device: updates, an elastic IP assigned and removed, and deletion failing its open batch', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    expect(await changesOf(t, () => ok(t, 'PUT', `/devices/${d.id}`, { hostname: 'renamed' }))).toEqual(['device updated']);
    const vip = await ok<IpReservationWire>(t, 'POST', `/projects/${t.projectId}/ips`, { type: 'public_ipv4', quantity: 1, metro: 'da' });
    let assignment = '';
    const assigned = await changesOf(t, async () => {
      assignment = (await ok<IpAssignmentWire>(t, 'POST', `/devices/${d.id}/ips`, { address: vip.address })).id;
    });
    expect(assigned).toEqual(['device updated']);
    expect(await changesOf(t, () => ok(t, 'DELETE', `/ips/${assignment}`))).toEqual(['device updated']);
    expect(t.sim.store.devices.get(d.id)?.ipAssignments.map((a) => a.id)).not.toContain(assignment);

    const vlan = await createVlan(t, { vxlan: 1503 });
    await ok(t, 'POST', `/ports/${portByName(d, 'bond0').id}/vlan-assignments/batches`, {
      vlan_assignments: [{ vlan: vlan.id, state: 'assigned' }],
    });
    expect(await changesOf(t, () => ok(t, 'DELETE', `/devices/${d.id}`))).toEqual(['batch state', 'device state']);
    expect(await changesOf(t, () => Promise.resolve(t.clock.advance(DEFAULT_DELAYS.deviceDeprovisioningMs)))).toEqual(['device deleted']);
  });
});

describeContract(sim);
