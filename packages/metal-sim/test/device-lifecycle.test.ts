// Devices over real HTTP: creation with the fields CAPP sends, the queued -> provisioning -> active
// lifecycle driven by the clock, events, user data, updates and deletion, 2- and 4-port plans.

import { describe, expect, test } from '@jest/globals';
import { startSimulator } from '../src/server.js';
import { DEFAULT_DELAYS } from '../src/store.js';
import type { EventWire } from '../src/wire.js';
import { Api, createActiveDevice, DEPROVISION_MS, describeContract, portByName, useSimulator, waitFor } from './support/harness.js';

const sim = useSimulator();

describe('device lifecycle', () => {
  test('a created device is queued, then provisioning, then active as the clock advances', async () => {
    const t = sim();
    const created = await t.api.post(`/projects/${t.projectId}/devices`, {
      metro: 'da',
      plan: 'c3.small.x86',
      operating_system: 'ubuntu_22_04',
      hostname: 'cp-0',
      userdata: '#cloud-config\nruncmd: [echo hi]\n',
      tags: ['capp:cluster-id:demo', 'kubernetes.io/role:master'],
      billing_cycle: 'hourly',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      hostname: 'cp-0',
      state: 'queued',
      network_type: 'layer3',
      tags: ['capp:cluster-id:demo', 'kubernetes.io/role:master'],
    });
    const id: string = created.body.id;

    t.clock.advance(DEFAULT_DELAYS.deviceQueuedMs - 1);
    expect((await t.api.get(`/devices/${id}`)).body.state).toBe('queued');
    t.clock.advance(1);
    expect((await t.api.get(`/devices/${id}`)).body.state).toBe('provisioning');
    t.clock.advance(DEFAULT_DELAYS.deviceProvisioningMs);
    const active = await t.api.get(`/devices/${id}`);
    expect(active.body.state).toBe('active');
    expect(active.body.provisioning_percentage).toBe(100);
  });

  test('the user data given at creation is stored and served back', async () => {
    const t = sim();
    const userdata = '#!/bin/bash\necho "network first"\n';
    const d = await createActiveDevice(t, { userdata });
    expect(d.userdata).toBe(userdata);
    expect((await t.api.get(`/devices/${d.id}/userdata`)).body).toEqual({ userdata });
  });

  test('device events list the lifecycle newest first', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const events = await t.api.get<{ events: EventWire[]; meta: unknown }>(`/devices/${d.id}/events`);
    expect(events.status).toBe(200);
    expect(events.body.events.map((e) => e.type)).toEqual(['provisioning.active', 'provisioning.provisioning', 'instance.created']);
    expect(events.body.meta).toMatchObject({ total: 3, current_page: 1, last_page: 1 });
  });

  test('a 2-port plan has bond0 over eth0 and eth1, each with a MAC, in layer 3 with addresses', async () => {
    const t = sim();
    const d = await createActiveDevice(t, { plan: 'c3.small.x86' });
    expect(d.network_ports.map((p) => p.name)).toEqual(['bond0', 'eth0', 'eth1']);
    const bond0 = portByName(d, 'bond0');
    expect(bond0).toMatchObject({
      type: 'NetworkBondPort',
      network_type: 'layer3',
      data: { bonded: true },
      disbond_operation_supported: false,
    });
    for (const name of ['eth0', 'eth1']) {
      const eth = portByName(d, name);
      expect(eth).toMatchObject({ type: 'NetworkPort', bond: { id: bond0.id, name: 'bond0' }, data: { bonded: true } });
      expect(eth.data.mac).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
      expect(eth.network_type).toBeUndefined();
    }
    // eth0 carries bond0's layer 3; only eth1 may leave (hybrid).
    expect(portByName(d, 'eth0').disbond_operation_supported).toBe(false);
    expect(portByName(d, 'eth1').disbond_operation_supported).toBe(true);
    expect(d.ip_addresses.map((a) => [a.address_family, a.public, a.cidr])).toEqual([
      [4, true, 31],
      [4, false, 31],
      [6, true, 127],
    ]);
  });

  test('a 4-port plan has bond0 (eth0, eth2) and bond1 (eth1, eth3)', async () => {
    const t = sim();
    const d = await createActiveDevice(t, { plan: 'n3.xlarge.x86' });
    expect(d.network_ports.map((p) => p.name)).toEqual(['bond0', 'bond1', 'eth0', 'eth1', 'eth2', 'eth3']);
    expect(['eth0', 'eth2'].map((n) => portByName(d, n).bond?.name)).toEqual(['bond0', 'bond0']);
    expect(['eth1', 'eth3'].map((n) => portByName(d, n).bond?.name)).toEqual(['bond1', 'bond1']);
  });

  test('updating a device changes hostname, tags, user data and network_frozen', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const updated = await t.api.put(`/devices/${d.id}`, { hostname: 'renamed', tags: ['x'], userdata: 'new', network_frozen: true });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ hostname: 'renamed', tags: ['x'], userdata: 'new', network_frozen: true });
  });

  test('a deleted device is gone, and a locked one cannot be deleted', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    expect((await t.api.delete(`/devices/${d.id}`)).status).toBe(204);
    t.clock.advance(DEPROVISION_MS);
    expect((await t.api.get(`/devices/${d.id}`)).status).toBe(404);
    const locked = await createActiveDevice(t, { locked: true });
    const refused = await t.api.delete(`/devices/${locked.id}`);
    expect(refused.status).toBe(422);
    expect(String(refused.body.errors[0])).toContain('locked');
  });

  test('creation refuses an unknown plan, an unknown metro and a missing or unknown operating system with 422', async () => {
    const t = sim();
    const base = { metro: 'da', plan: 'c3.small.x86', operating_system: 'ubuntu_22_04' };
    for (const [body, text] of [
      [{ ...base, plan: 'no.such.plan' }, 'plan'],
      [{ ...base, metro: 'zz' }, 'metro'],
      [{ metro: 'da', plan: 'c3.small.x86', operating_system: '' }, 'operating_system'],
      [{ ...base, operating_system: 'ubuntu_18_10' }, 'ubuntu_18_10 is not a valid operating system'],
      [{ ...base, operating_system: 'flatcar' }, 'flatcar is not a valid operating system'],
    ] as const) {
      const res = await t.api.post(`/projects/${t.projectId}/devices`, body);
      expect(res.status).toBe(422);
      expect((res.body as { errors: string[] }).errors.join(' ')).toContain(text);
    }
  });

  test('the request log ties each call to its device', async () => {
    const t = sim();
    const mark = t.sim.requests.lastSeq();
    const d = await createActiveDevice(t);
    await t.api.get(`/devices/${d.id}/events`);
    expect(t.sim.requests.countByOperation({ deviceId: d.id, afterSeq: mark })).toEqual({
      createDevice: 1,
      findDeviceById: 1,
      findDeviceEvents: 1,
    });
  });
});

describe('device lifecycle on the system clock', () => {
  test('a device becomes active after the configured delays', async () => {
    const contract = sim().sim.contract;
    const real = await startSimulator({
      seed: 'system-clock',
      delays: { deviceQueuedMs: 20, deviceProvisioningMs: 20 },
      ...(contract === undefined ? {} : { contract }),
    });
    try {
      const api = new Api(real.baseUrl);
      const projectId = [...real.store.projects.values()][0]?.id ?? '';
      const created = await api.post(`/projects/${projectId}/devices`, {
        metro: 'sv',
        plan: 'm3.small.x86',
        operating_system: 'debian_12',
      });
      expect(created.status).toBe(201);
      const state = await waitFor(
        'the device to become active',
        async () => {
          const s = (await api.get<{ state: string }>(`/devices/${created.body.id}`)).body.state;
          return s === 'active' ? s : undefined;
        },
        { timeoutMs: 5_000, intervalMs: 10 },
      );
      expect(state).toBe('active');
    } finally {
      await real.close();
    }
  });
});

describeContract(sim);
