// What the real CAPP v0.9.0 needs from the API beyond what our controllers call, found by running
// it against the simulator (docs/capi-e2e.md): a device's facility, elastic IPs that look like
// real ones, and assigning the control-plane VIP to the first control-plane device.

import { describe, expect, test } from '@jest/globals';
import type { DeviceWire, IpAssignmentWire, IpReservationWire } from '../src/wire.js';
import { createActiveDevice, DEPROVISION_MS, describeContract, useSimulator } from './support/harness.js';

const sim = useSimulator();

/** The body CAPP's CreateIP sends for a CPEM VIP (metro placement, facility left empty). */
function vipRequest(cluster: string): Record<string, unknown> {
  return {
    type: 'public_ipv4',
    quantity: 1,
    facility: '',
    metro: 'da',
    fail_on_approval_required: true,
    tags: [`cluster-api-provider-packet:cluster-id:${cluster}`],
  };
}

describe('calls the real CAPP v0.9.0 makes', () => {
  test('a metro-placed device still reports a facility of that metro (CAPP reads device.facility.code)', async () => {
    const t = sim();
    const device = await createActiveDevice(t);
    expect(device.facility).toMatchObject({ code: 'da11', metro: { code: 'da' } });
    expect(device.facility.id).toMatch(/^[0-9a-f-]{36}$/);
    const listed = await t.api.get<{ devices: DeviceWire[] }>(`/projects/${t.projectId}/devices`);
    expect(listed.body.devices.find((d) => d.id === device.id)?.facility.code).toBe('da11');
    const metadata = await t.api.get<{ facility: string }>(`/devices/${device.id}/metadata`);
    expect(metadata.body.facility).toBe('da11');
  });

  test('an elastic IP (public_ipv4, quantity 1) is a /32 that is its own gateway, outside the devices’ blocks', async () => {
    const t = sim();
    const vip = await t.api.post<IpReservationWire>(`/projects/${t.projectId}/ips`, vipRequest('vip-shape'));
    expect(vip.status).toBe(201);
    expect(vip.body).toMatchObject({ cidr: 32, netmask: '255.255.255.255', public: true, assignments: [] });
    expect(vip.body.address).toBe(vip.body.network);
    expect(vip.body.gateway).toBe(vip.body.address);
    expect(vip.body.address).not.toMatch(/\.0$/);
    expect(vip.body.address.startsWith('147.75.')).toBe(false);
  });

  test('createIPAssignment puts the VIP on a device; the reservation lists it; it goes with the device', async () => {
    const t = sim();
    const vip = (await t.api.post<IpReservationWire>(`/projects/${t.projectId}/ips`, vipRequest('vip-assign'))).body;
    const device = await createActiveDevice(t);
    const assigned = await t.api.post<IpAssignmentWire>(`/devices/${device.id}/ips`, { address: vip.address });
    expect(assigned.status).toBe(201);
    expect(assigned.body).toMatchObject({
      address: vip.address,
      cidr: 32,
      public: true,
      management: false,
      assigned_to: { href: `/metal/v1/devices/${device.id}` },
    });
    const after = (await t.api.get<IpReservationWire>(`/ips/${vip.id}`)).body;
    expect(after.assignments).toEqual([{ href: `/metal/v1/ips/${assigned.body.id}` }]);
    const withVip = (await t.api.get<DeviceWire>(`/devices/${device.id}`)).body;
    expect(withVip.ip_addresses.map((a) => a.address)).toContain(vip.address);

    // Twice, or an address no reservation holds: 422.
    expect((await t.api.post(`/devices/${device.id}/ips`, { address: vip.address })).status).toBe(422);
    expect((await t.api.post(`/devices/${device.id}/ips`, { address: '198.51.100.7' })).status).toBe(422);

    expect((await t.api.delete(`/devices/${device.id}`)).status).toBe(204);
    // A deprovisioning device keeps its addresses until it is gone.
    expect((await t.api.get<IpReservationWire>(`/ips/${vip.id}`)).body.assignments).toHaveLength(1);
    t.clock.advance(DEPROVISION_MS);
    expect((await t.api.get<IpReservationWire>(`/ips/${vip.id}`)).body.assignments).toEqual([]);
  });

  describeContract(sim);
});
