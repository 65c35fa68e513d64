// X-Auth-Token: 401 without a valid token; a token scoped to one project sees another project's
// objects as 403 where the spec lists 403 for the call and as 404 where it does not.

import { describe, expect, test } from '@jest/globals';
import type { DeviceWire } from '../src/wire.js';
import { createActiveDevice, createVlan, describeContract, portByName, useSimulator, type TestSim } from './support/harness.js';

const sim = useSimulator({
  seedConfig: {
    metros: [{ code: 'da' }],
    plans: [{ slug: 'c3.small.x86', ports: 2 }],
    projects: [{ name: 'alpha' }, { name: 'beta' }],
    tokens: [{ token: 'sim-token' }, { token: 'beta-token', projects: ['beta'] }],
  },
});

function beta(t: TestSim): { id: string; api: TestSim['api'] } {
  const project = [...t.sim.store.projects.values()].find((p) => p.name === 'beta');
  if (project === undefined) throw new Error('no beta project');
  return { id: project.id, api: t.api.withToken('beta-token') };
}

describe('authentication and project scope', () => {
  test('a call without X-Auth-Token answers 401 in the API error format', async () => {
    const t = sim();
    const res = await t.api.withToken(null).get(`/projects/${t.projectId}/devices`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Invalid authentication token' });
  });

  test('an unknown token answers 401', async () => {
    const t = sim();
    expect((await t.api.withToken('not-a-token').get(`/projects/${t.projectId}/virtual-networks`)).status).toBe(401);
  });

  test("another project's collection answers 403", async () => {
    const t = sim();
    const res = await beta(t).api.get(`/projects/${t.projectId}/devices`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'You are not authorized to view this project' });
    expect((await beta(t).api.post(`/projects/${t.projectId}/virtual-networks`, { metro: 'da' })).status).toBe(403);
  });

  test("another project's device and VLAN answer 403; its port answers 404 where the spec lists no 403", async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const vlan = await createVlan(t, { vxlan: 1500 });
    const b = beta(t).api;
    expect((await b.get(`/devices/${d.id}`)).status).toBe(403);
    expect((await b.get(`/virtual-networks/${vlan.id}`)).status).toBe(403);
    expect((await b.post(`/ports/${portByName(d, 'bond0').id}/assign`, { vnid: vlan.id })).status).toBe(403);
    expect((await b.get(`/ports/${portByName(d, 'bond0').id}`)).status).toBe(404);
    expect((await b.post(`/ports/${portByName(d, 'eth1').id}/native-vlan?vnid=1500`)).status).toBe(404);
  });

  test("a scoped token cannot reach another project's VLAN through its own device", async () => {
    const t = sim();
    const { id: betaId, api: b } = beta(t);
    const alphaVlan = await createVlan(t, { vxlan: 1600 });
    const created = await b.post<DeviceWire>(`/projects/${betaId}/devices`, {
      metro: 'da',
      plan: 'c3.small.x86',
      operating_system: 'ubuntu_22_04',
    });
    expect(created.status).toBe(201);
    t.clock.advance(10_000);
    const res = await b.post<{ errors: string[] }>(`/ports/${portByName(created.body, 'bond0').id}/assign`, { vnid: alphaVlan.id });
    expect(res.status).toBe(422);
    expect(res.body.errors[0]).toContain('not found');
  });

  test('a scoped token lists only its projects', async () => {
    const t = sim();
    const res = await beta(t).api.get<{ projects: { name: string }[] }>('/projects');
    expect(res.body.projects.map((p) => p.name)).toEqual(['beta']);
    const all = await t.api.get<{ projects: { name: string }[] }>('/projects');
    expect(all.body.projects.map((p) => p.name)).toEqual(['alpha', 'beta']);
  });

  test('unknown ids answer 404 with {"error": ...}', async () => {
    const t = sim();
    const res = await t.api.get('/devices/00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Not found' });
  });
});

describeContract(sim);
