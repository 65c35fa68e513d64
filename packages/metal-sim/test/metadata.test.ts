// The metadata service a device's first-boot script reads: interfaces with the MACs the API shows,
// bonding, addresses, and the user-state endpoint whose events the controller polls.

import { describe, expect, test } from '@jest/globals';
import type { DeviceWire, EventWire } from '../src/wire.js';
import { createActiveDevice, describeContract, portByName, PROVISION_MS, useSimulator } from './support/harness.js';

const sim = useSimulator();

interface MetadataDoc {
  id: string;
  hostname: string;
  plan: string;
  metro: string;
  state: string;
  tags: string[];
  network: {
    bonding: { mode: number; link_aggregation: string; mac: string };
    interfaces: { name: string; mac: string; bond: string | null }[];
    addresses: { address: string; cidr: number; public: boolean; address_family: number; gateway: string; management: boolean }[];
  };
  user_state_url: string;
  api_url: string;
  phone_home_url: string;
}

async function fetchJson<T>(url: string, init?: RequestInit): Promise<{ status: number; body: T }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

describe('metadata service', () => {
  test('the document lists the interfaces with the MACs of the API ports, the bond and the addresses', async () => {
    const t = sim();
    const d = await createActiveDevice(t, { hostname: 'md-1', tags: ['a'] });
    const { status, body } = await fetchJson<MetadataDoc>(t.sim.metadataUrl(d.id));
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: d.id, hostname: 'md-1', plan: 'c3.small.x86', metro: 'da', state: 'active', tags: ['a'] });
    expect(body.network.interfaces).toEqual([
      { name: 'eth0', mac: portByName(d, 'eth0').data.mac, bond: 'bond0' },
      { name: 'eth1', mac: portByName(d, 'eth1').data.mac, bond: 'bond0' },
    ]);
    expect(body.network.bonding).toEqual({ mode: 4, link_aggregation: 'mlag_ha', mac: portByName(d, 'eth0').data.mac });
    expect(body.network.addresses.map((a) => a.address)).toEqual(d.ip_addresses.map((a) => a.address));
    expect(body.network.addresses.every((a) => a.management)).toBe(true);
    expect(body.user_state_url).toBe(`${t.sim.url}/metadata/${d.id}/events`);
    expect(body.api_url).toBe(t.sim.baseUrl);
  });

  test('the user data is served as text at the metadata service', async () => {
    const t = sim();
    const d = await createActiveDevice(t, { userdata: '#cloud-config\n{}\n' });
    const res = await fetch(`${t.sim.metadataUrl(d.id)}/userdata`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('#cloud-config\n{}\n');
  });

  test('a user-state event posted by the host appears in the device events', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const doc = (await fetchJson<MetadataDoc>(t.sim.metadataUrl(d.id))).body;
    const post = await fetch(doc.user_state_url, {
      method: 'POST',
      body: JSON.stringify({ state: 'succeeded', code: 1001, message: 'network_configuration_success' }),
    });
    expect(post.status).toBe(204);
    const events = await t.api.get<{ events: EventWire[] }>(`/devices/${d.id}/events?per_page=1`);
    expect(events.body.events[0]).toMatchObject({
      type: 'user.state',
      state: 'succeeded',
      body: 'network_configuration_success',
      interpolated: '1001: network_configuration_success',
    });
  });

  test('user-state-event: a state or code outside the documented values is refused', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    for (const body of [
      { state: 'done', code: 1000 },
      { state: 'running', code: 999 },
      { state: 'running', code: 1100 },
    ]) {
      const res = await fetchJson<{ errors: string[] }>(`${t.sim.metadataUrl(d.id)}/events`, {
        method: 'POST',
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(422);
      expect(t.sim.requests.entries().at(-1)?.rule).toBe('user-state-event');
    }
  });

  test('the service answers only active devices that still have layer 3', async () => {
    const t = sim();
    const created = await t.api.post<DeviceWire>(`/projects/${t.projectId}/devices`, {
      metro: 'da',
      plan: 'c3.small.x86',
      operating_system: 'ubuntu_22_04',
    });
    expect((await fetch(t.sim.metadataUrl(created.body.id))).status).toBe(404);
    t.clock.advance(PROVISION_MS);
    expect((await fetch(t.sim.metadataUrl(created.body.id))).status).toBe(200);
    await t.api.post(`/ports/${portByName(created.body, 'bond0').id}/convert/layer-2`, {});
    const gone = await fetchJson<{ error: string }>(t.sim.metadataUrl(created.body.id));
    expect(gone.status).toBe(404);
    expect(gone.body.error).toContain('layer2-bonded');
  });

  test('a disbonded interface shows no bond in the document', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    await t.api.post(`/ports/${portByName(d, 'eth1').id}/disbond`);
    const doc = (await fetchJson<MetadataDoc>(t.sim.metadataUrl(d.id))).body;
    expect(doc.network.interfaces.map((i) => [i.name, i.bond])).toEqual([
      ['eth0', 'bond0'],
      ['eth1', null],
    ]);
  });

  test('the API serves the spec-shaped metadata of a device', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const res = await t.api.get<{ id: string; network: { addresses: string[]; interfaces: unknown[] } }>(`/devices/${d.id}/metadata`);
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(d.id);
    expect(res.body.network.addresses).toEqual(d.ip_addresses.map((a) => `${a.address}/${a.cidr}`));
    expect(res.body.network.interfaces).toHaveLength(2);
  });

  test('metadata calls are logged against the device', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    await fetch(t.sim.metadataUrl(d.id));
    expect(t.sim.requests.entries({ deviceId: d.id }).filter((e) => e.path.startsWith('/metadata/'))).toHaveLength(1);
  });
});

describeContract(sim);
