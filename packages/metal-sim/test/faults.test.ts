// Fault injection through the admin endpoint and start options: 429 with Retry-After, 5xx (JSON
// or an intermediary's HTML), latency, dropped connections; per operation or method + path; always,
// for the next N calls, or with a seeded probability. And the request log that counts it all.

import { beforeEach, describe, expect, test } from '@jest/globals';
import { waitFor } from '@metal-l2/test-support/wait-for';
import type { FaultRule } from '../src/faults.js';
import type { RequestLogEntry } from '../src/request-log.js';
import { startSimulator } from '../src/server.js';
import type { BatchWire, PortWire } from '../src/wire.js';
import {
  Api,
  BATCH_MS,
  createActiveDevice,
  createVlan,
  describeContract,
  portByName,
  useSimulator,
  type TestSim,
} from './support/harness.js';

const sim = useSimulator();

async function admin<T>(t: TestSim, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${t.sim.url}/_sim${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

async function addFault(t: TestSim, rule: Record<string, unknown>): Promise<FaultRule> {
  const res = await admin<{ faults: FaultRule[] }>(t, 'POST', '/faults', rule);
  expect(res.status).toBe(201);
  const added = res.body.faults[0];
  if (added === undefined) throw new Error('no rule added');
  return added;
}

describe('fault injection', () => {
  test('rate-limit: the next N calls of an operation answer 429 with Retry-After, then calls pass', async () => {
    const t = sim();
    const rule = await addFault(t, { fault: 'rate-limit', operationId: 'findVirtualNetworks', times: 2, retryAfterSeconds: 3 });
    const path = `/projects/${t.projectId}/virtual-networks`;
    for (let i = 0; i < 2; i++) {
      const res = await t.api.get(path);
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('3');
      expect(res.body).toEqual({ error: 'Too many requests, slow down' });
    }
    expect((await t.api.get(path)).status).toBe(200);
    // Other operations were never affected.
    expect((await t.api.get(`/projects/${t.projectId}/vrfs`)).status).toBe(200);
    const listed = await admin<{ faults: FaultRule[] }>(t, 'GET', '/faults');
    expect(listed.body.faults.find((f) => f.id === rule.id)).toMatchObject({ matched: 3, fired: 2, remaining: 0 });
    await admin(t, 'DELETE', '/faults');
  });

  test('server-error by method and path pattern: only matching calls answer 503', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    await t.api.post(`/projects/${t.projectId}/virtual-networks`, { metro: 'da', vxlan: 1200 });
    await addFault(t, { fault: 'server-error', status: 503, method: 'POST', path: '/ports/{id}/assign' });
    const bond0 = portByName(d, 'bond0').id;
    const res = await t.api.post(`/ports/${bond0}/assign`, { vnid: '1200' });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'Internal server error (injected)' });
    expect((await t.api.get(`/ports/${bond0}`)).status).toBe(200);
    expect((await t.api.get<{ virtual_networks: unknown[] }>(`/ports/${bond0}`)).body.virtual_networks).toEqual([]);
    await admin(t, 'DELETE', '/faults');
    expect((await t.api.post(`/ports/${bond0}/assign`, { vnid: '1200' })).status).toBe(200);
  });

  test('an intermediary-style 502 answers with an HTML page, not JSON', async () => {
    const t = sim();
    await addFault(t, { fault: 'server-error', status: 502, path: '/projects/**', html: true, times: 1 });
    const res = await fetch(`${t.sim.baseUrl}/projects/${t.projectId}`, { headers: { 'x-auth-token': 'sim-token' } });
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('text/html');
    expect(await res.text()).toContain('502 Bad Gateway');
  });

  test('latency: a matching call waits at least the injected time before answering', async () => {
    const t = sim();
    const rule = await addFault(t, { fault: 'latency', operationId: 'findProjectById', latencyMs: 150, times: 1 });
    const started = Date.now();
    expect((await t.api.get(`/projects/${t.projectId}`)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    const entry = t.sim.requests.entries({ operationId: 'findProjectById' }).at(-1);
    expect(entry?.durationMs).toBeGreaterThanOrEqual(150);
    expect(t.sim.faults.list().find((f) => f.id === rule.id)?.fired).toBe(1);
  });

  test('the log records when a call arrived, not when its (delayed) answer was ready', async () => {
    const t = sim();
    const rule = await addFault(t, { fault: 'latency', operationId: 'findProjectById', latencyMs: 300, times: 1 });
    const arrived = t.sim.store.nowIso();
    const answered = t.api.get(`/projects/${t.projectId}`);
    // The call is in the simulator, waiting out its latency: a minute passes on the store's clock.
    await waitFor('the call to reach the latency rule', () => t.sim.faults.list().find((f) => f.id === rule.id)?.matched === 1, {
      timeoutMs: 10_000,
      intervalMs: 5,
    });
    t.clock.advance(60_000);
    expect((await answered).status).toBe(200);
    expect(t.sim.requests.entries({ operationId: 'findProjectById' }).at(-1)?.at).toBe(arrived);
  });

  test('drop: the connection closes without an answer and the log records status 0', async () => {
    const t = sim();
    const rule = await addFault(t, { fault: 'drop', operationId: 'findProjectById', times: 1 });
    await expect(t.api.get(`/projects/${t.projectId}`)).rejects.toThrow();
    const entry: RequestLogEntry | undefined = t.sim.requests.entries({ operationId: 'findProjectById' }).at(-1);
    expect(entry).toMatchObject({ status: 0, faultRuleId: rule.id });
    expect((await t.api.get(`/projects/${t.projectId}`)).status).toBe(200);
  });

  test('probability: the same seed fails the same calls, and about the given share of them', async () => {
    const contract = sim().sim.contract;
    const pattern = async (seed: string): Promise<number[]> => {
      const s = await startSimulator({
        seed,
        faults: [{ fault: 'server-error', operationId: 'findProjects', probability: 0.3 }],
        ...(contract === undefined ? {} : { contract }),
      });
      try {
        const api = new Api(s.baseUrl);
        const statuses: number[] = [];
        for (let i = 0; i < 40; i++) statuses.push((await api.get('/projects')).status);
        return statuses;
      } finally {
        await s.close();
      }
    };
    const a = await pattern('dice');
    expect(await pattern('dice')).toEqual(a);
    const failures = a.filter((s) => s === 500).length;
    expect(failures).toBeGreaterThan(3);
    expect(failures).toBeLessThan(25);
    expect(await pattern('other-dice')).not.toEqual(a);
  });

  test('batch-failed: the next N VLAN assignment batches are accepted, then end failed with the message; the port is unchanged; later batches complete', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const vlan = await createVlan(t, { vxlan: 1300 });
    const bond0 = portByName(d, 'bond0').id;
    const rule = await addFault(t, { fault: 'batch-failed', times: 2, message: 'switch unreachable (injected)' });
    const batch = async (): Promise<BatchWire> => {
      const created = await t.api.post<BatchWire>(`/ports/${bond0}/vlan-assignments/batches`, {
        vlan_assignments: [{ vlan: vlan.id, state: 'assigned' }],
      });
      expect(created.status).toBe(201);
      expect(created.body.state).toBe('queued');
      t.clock.advance(BATCH_MS);
      return (await t.api.get<BatchWire>(`/ports/${bond0}/vlan-assignments/batches/${created.body.id}`)).body;
    };
    for (let i = 0; i < 2; i++) {
      expect(await batch()).toMatchObject({ state: 'failed', error_messages: ['switch unreachable (injected)'] });
      expect((await t.api.get<PortWire>(`/ports/${bond0}`)).body.virtual_networks).toEqual([]);
    }
    expect(await batch()).toMatchObject({ state: 'completed', error_messages: [] });
    expect((await admin<{ faults: FaultRule[] }>(t, 'GET', '/faults')).body.faults.find((f) => f.id === rule.id)).toMatchObject({
      fired: 2,
      remaining: 0,
    });
    // The calls themselves were answered by the API, not by the fault: no rule id in the log.
    expect(t.sim.requests.entries({ operationId: 'createPortVlanAssignmentBatch' }).map((e) => [e.status, e.faultRuleId])).toEqual([
      [201, undefined],
      [201, undefined],
      [201, undefined],
    ]);
    await admin(t, 'DELETE', '/faults');
  });

  test('batch-failed until cleared, on one port only (path); a batch refused with 422 does not use up the rule', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const vlan = await createVlan(t, { vxlan: 1301 });
    const [bond0, eth1] = [portByName(d, 'bond0').id, portByName(d, 'eth1').id];
    const wrong = await admin<{ error: string }>(t, 'POST', '/faults', { fault: 'batch-failed', operationId: 'assignPort' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toContain('batch-failed rules match createPortVlanAssignmentBatch only, not assignPort');
    expect((await admin<{ faults: FaultRule[] }>(t, 'GET', '/faults')).body.faults).toEqual([]);
    const rule = await addFault(t, { fault: 'batch-failed', path: `/ports/${bond0}/vlan-assignments/batches` });
    const post = (port: string, items: unknown[]) =>
      t.api.post<BatchWire>(`/ports/${port}/vlan-assignments/batches`, { vlan_assignments: items });
    expect((await post(bond0, [])).status).toBe(422);
    const failing = await post(bond0, [{ vlan: vlan.id, state: 'assigned' }]);
    t.clock.advance(BATCH_MS);
    const got = (await t.api.get<BatchWire>(`/ports/${bond0}/vlan-assignments/batches/${failing.body.id}`)).body;
    expect(got.state).toBe('failed');
    expect(got.error_messages[0]).toContain('injected');
    expect(t.sim.faults.list().find((f) => f.id === rule.id)).toMatchObject({ fired: 1 });
    // Another port's batch is not matched by the path.
    expect((await t.api.post(`/ports/${eth1}/disbond`)).status).toBe(200);
    const other = await post(eth1, [{ vlan: vlan.id, state: 'assigned' }]);
    t.clock.advance(BATCH_MS);
    expect((await t.api.get<BatchWire>(`/ports/${eth1}/vlan-assignments/batches/${other.body.id}`)).body.state).toBe('completed');
    expect((await admin(t, 'DELETE', `/faults/${rule.id}`)).status).toBe(204);
    const passing = await post(bond0, [{ vlan: vlan.id, state: 'assigned' }]);
    t.clock.advance(BATCH_MS);
    expect((await t.api.get<BatchWire>(`/ports/${bond0}/vlan-assignments/batches/${passing.body.id}`)).body.state).toBe('completed');
  });

  test('the admin endpoint refuses a malformed rule and removes rules by id', async () => {
    const t = sim();
    const bad = await admin<{ error: string }>(t, 'POST', '/faults', { fault: 'explode' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('fault must be one of');
    const rule = await addFault(t, { fault: 'rate-limit', operationId: 'findProjects' });
    expect((await admin(t, 'DELETE', `/faults/${rule.id}`)).status).toBe(204);
    expect((await admin(t, 'DELETE', `/faults/${rule.id}`)).status).toBe(404);
    expect((await t.api.get('/projects')).status).toBe(200);
  });
});

describe('admin input is checked: 400 naming the field, nothing changed', () => {
  beforeEach(async () => {
    expect((await admin(sim(), 'DELETE', '/faults')).status).toBe(204);
  });

  test('a rule with a misspelled key (count for times) is refused, not armed to fire on every call', async () => {
    const t = sim();
    const res = await admin<{ error: string }>(t, 'POST', '/faults', { fault: 'server-error', operationId: 'findProjects', count: 2 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/faults\[0\]: unknown key count \(known: fault, .*times/);
    expect(t.sim.faults.list()).toEqual([]);
    expect((await t.api.get('/projects')).status).toBe(200);
  });

  test.each([
    [{ fault: 'server-error', times: '2' }, 'faults[0].times must be a number'],
    [{ fault: 'latency', latencyMs: 10, method: 7 }, 'faults[0].method must be a non-empty string'],
    [{ fault: 'rate-limit', html: 'yes' }, 'faults[0].html must be a boolean'],
    [{ fault: 'drop', status: 503 }, 'faults[0].status applies to server-error rules only, not drop'],
    [[{ fault: 'drop' }, { fault: 'latency', retryAfter: 1 }], 'faults[1]: unknown key retryAfter'],
    [{ faults: [{ fault: 'drop' }], replace: true }, 'the fault document: unknown key replace'],
  ])('POST /_sim/faults %j answers 400: %s', async (body, message) => {
    const t = sim();
    const res = await admin<{ error: string }>(t, 'POST', '/faults', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(message);
    // One bad rule of a list adds none of them.
    expect(t.sim.faults.list()).toEqual([]);
  });

  test.each([
    ['?deviceid=x', 'unknown key deviceid'],
    ['?status=abc', 'status must be a non-negative integer'],
    ['?afterSeq=-1', 'afterSeq must be a non-negative integer'],
    ['?excludeFaults=yes', 'excludeFaults must be true or false'],
    ['?method=GET&method=POST', 'method is given more than once'],
  ])('GET /_sim/requests%s answers 400: %s', async (query, message) => {
    const res = await admin<{ error: string }>(sim(), 'GET', `/requests${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(message);
  });

  test('POST /_sim/devices/{id}/state refuses unknown keys and unknown states, and changes nothing', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const typo = await admin<{ error: string }>(t, 'POST', `/devices/${d.id}/state`, { state: 'failed', reason: 'x' });
    expect(typo).toMatchObject({ status: 400, body: { error: expect.stringContaining('unknown key reason') } });
    const bad = await admin<{ error: string }>(t, 'POST', `/devices/${d.id}/state`, { state: 'exploded' });
    expect(bad).toMatchObject({ status: 400, body: { error: expect.stringContaining('state must be one of') } });
    expect(t.sim.store.devices.get(d.id)?.state).toBe('active');
    const ok = await admin(t, 'POST', `/devices/${d.id}/state`, { state: 'failed' });
    expect(ok).toMatchObject({ status: 200, body: { id: d.id, state: 'failed' } });
  });
});

describe('request log', () => {
  test('counts Metal calls per device and operation, in process and at /_sim/requests', async () => {
    const t = sim();
    const mark = t.sim.requests.lastSeq();
    const d = await createActiveDevice(t);
    await t.api.post(`/ports/${portByName(d, 'eth1').id}/disbond`);
    expect(t.sim.requests.countByOperation({ deviceId: d.id, afterSeq: mark })).toEqual({
      createDevice: 1,
      findDeviceById: 1,
      disbondPort: 1,
    });
    const remote = await admin<{ count: number; requests: RequestLogEntry[] }>(
      t,
      'GET',
      `/requests?deviceId=${d.id}&operationId=disbondPort`,
    );
    expect(remote.body.count).toBe(1);
    expect(remote.body.requests[0]).toMatchObject({ method: 'POST', status: 200, portId: portByName(d, 'eth1').id });
    expect((await admin(t, 'DELETE', '/requests')).status).toBe(204);
    expect(t.sim.requests.count()).toBe(0);
  });
});

describeContract(sim);
