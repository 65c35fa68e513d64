// Deleting a device is not instant: the spec's `deprovisioning` state comes first, then the device
// is gone (404). While it deprovisions it is still listed and readable, but takes no changes.

import { describe, expect, test } from '@jest/globals';
import { DEFAULT_DELAYS } from '../src/store.js';
import type { DeviceWire } from '../src/wire.js';
import {
  createActiveDevice,
  createVlan,
  DEPROVISION_MS,
  describeContract,
  expectRefusedBy,
  portByName,
  useSimulator,
} from './support/harness.js';

const sim = useSimulator();
const instant = useSimulator({ delays: { deviceDeprovisioningMs: 0 } });

describe('device deletion', () => {
  test('a deleted device is deprovisioning, still listed, then gone (404) after the deprovisioning delay', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    expect((await t.api.delete(`/devices/${d.id}`)).status).toBe(204);
    const during = await t.api.get<DeviceWire>(`/devices/${d.id}`);
    expect({ status: during.status, state: during.body.state }).toEqual({ status: 200, state: 'deprovisioning' });
    const listed = await t.api.get<{ devices: DeviceWire[] }>(`/projects/${t.projectId}/devices`);
    expect(listed.body.devices.find((x) => x.id === d.id)?.state).toBe('deprovisioning');
    expect((await t.api.get(`/ports/${portByName(d, 'bond0').id}`)).status).toBe(200);

    t.clock.advance(DEPROVISION_MS - 1);
    expect((await t.api.get(`/devices/${d.id}`)).status).toBe(200);
    t.clock.advance(1);
    expect((await t.api.get(`/devices/${d.id}`)).status).toBe(404);
    expect((await t.api.get(`/ports/${portByName(d, 'bond0').id}`)).status).toBe(404);
    const after = await t.api.get<{ devices: DeviceWire[] }>(`/projects/${t.projectId}/devices`);
    expect(after.body.devices.map((x) => x.id)).not.toContain(d.id);
  });

  test('while deprovisioning: port changes, VLAN batches, updates and a second delete are refused (422)', async () => {
    const t = sim();
    const d = await createActiveDevice(t);
    const vlan = await createVlan(t, { vxlan: 2601 });
    const bond0 = portByName(d, 'bond0').id;
    const eth1 = portByName(d, 'eth1').id;
    expect((await t.api.delete(`/devices/${d.id}`)).status).toBe(204);

    expectRefusedBy(t, await t.api.post(`/ports/${bond0}/assign`, { vnid: vlan.id }), 'device-active');
    expectRefusedBy(t, await t.api.post(`/ports/${bond0}/convert/layer-2`, {}), 'device-active');
    expectRefusedBy(t, await t.api.post(`/ports/${eth1}/disbond`), 'device-active');
    expectRefusedBy(
      t,
      await t.api.post(`/ports/${bond0}/vlan-assignments/batches`, { vlan_assignments: [{ vlan: vlan.id, state: 'assigned' }] }),
      'device-active',
    );
    expectRefusedBy(t, await t.api.put(`/devices/${d.id}`, { hostname: 'renamed' }), 'device-deprovisioning');
    expectRefusedBy(t, await t.api.delete(`/devices/${d.id}`), 'device-delete-state');
    t.clock.advance(DEPROVISION_MS);
    expect((await t.api.delete(`/devices/${d.id}`)).status).toBe(404);
  });

  test('a device being provisioned cannot be deleted; queued and active ones can', async () => {
    const t = sim();
    const create = () =>
      t.api.post<DeviceWire>(`/projects/${t.projectId}/devices`, { metro: 'da', plan: 'c3.small.x86', operating_system: 'ubuntu_22_04' });
    const queued = (await create()).body;
    expect((await t.api.delete(`/devices/${queued.id}`)).status).toBe(204);
    const provisioning = (await create()).body;
    t.clock.advance(DEFAULT_DELAYS.deviceQueuedMs);
    expect((await t.api.get<DeviceWire>(`/devices/${provisioning.id}`)).body.state).toBe('provisioning');
    const refused = await t.api.delete<{ errors: string[] }>(`/devices/${provisioning.id}`);
    expectRefusedBy(t, refused, 'device-delete-state');
    expect(refused.body.errors).toEqual(['Cannot delete a device while it is provisioning']);
    t.clock.advance(DEFAULT_DELAYS.deviceProvisioningMs);
    expect((await t.api.delete(`/devices/${provisioning.id}`)).status).toBe(204);
  });

  test('deviceDeprovisioningMs: 0 removes the device within the DELETE call', async () => {
    const t = instant();
    const d = await createActiveDevice(t);
    expect((await t.api.delete(`/devices/${d.id}`)).status).toBe(204);
    expect((await t.api.get(`/devices/${d.id}`)).status).toBe(404);
  });
});

describeContract(sim);
