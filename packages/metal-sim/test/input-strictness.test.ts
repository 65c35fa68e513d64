// Request fields the simulator once took loosely: each is now read as the spec names it, and what
// the simulator does not model is refused rather than silently ignored.

import { describe, expect, test } from '@jest/globals';
import type { DeviceWire, VrfWire } from '../src/wire.js';
import { createActiveDevice, describeContract, portByName, useSimulator, type TestSim } from './support/harness.js';

const sim = useSimulator();
// Bodies the spec's request schema refuses too: run without the contract validator.
const unchecked = useSimulator({}, { contract: false });

const device = { metro: 'da', plan: 'c3.small.x86', operating_system: 'ubuntu_22_04' };

async function refused(t: TestSim, method: 'POST' | 'PUT', path: string, body: unknown, message: string): Promise<void> {
  const res = await t.api.call<{ errors: string[] }>(method, path, body);
  expect({ status: res.status, errors: res.body.errors.join(' ') }).toEqual({ status: 422, errors: expect.stringContaining(message) });
}

describe('request fields as the spec names them', () => {
  test('a VRF reservation names its VRF by vrf_id, not vrf', async () => {
    const t = unchecked();
    const vrf = await t.api.post<VrfWire>(`/projects/${t.projectId}/vrfs`, { name: 'v', metro: 'da', ip_ranges: ['10.20.0.0/16'] });
    expect(vrf.status).toBe(201);
    await refused(
      t,
      'POST',
      `/projects/${t.projectId}/ips`,
      { type: 'vrf', vrf: vrf.body.id, network: '10.20.1.0', cidr: 24 },
      'vrf_id is required',
    );
  });

  test('updating a VRF checks local_asn as creating one does, and changes the BGP flags', async () => {
    const t = sim();
    const vrf = (await t.api.post<VrfWire>(`/projects/${t.projectId}/vrfs`, { name: 'asn', metro: 'da' })).body;
    await refused(t, 'PUT', `/vrfs/${vrf.id}`, { local_asn: -1 }, 'local_asn must be between 0 and 4294967295');
    const updated = await t.api.put<VrfWire>(`/vrfs/${vrf.id}`, { bgp_dynamic_neighbors_enabled: true });
    expect(updated.body.bgp_dynamic_neighbors_enabled).toBe(true);
  });

  test('device fields the simulator does not model are refused, not ignored', async () => {
    const t = sim();
    const path = `/projects/${t.projectId}/devices`;
    await refused(
      t,
      'POST',
      path,
      { ...device, ip_addresses: [{ address_family: 4, public: false, ip_reservations: ['a-reservation'] }] },
      'ip_reservations is not offered',
    );
    await refused(
      t,
      'POST',
      path,
      { ...device, hardware_reservation_id: 'next-available' },
      'hardware reservation next-available not found',
    );
  });

  test('custom_ipxe needs an iPXE script URL or #!ipxe user data', async () => {
    const t = sim();
    const path = `/projects/${t.projectId}/devices`;
    await refused(t, 'POST', path, { ...device, operating_system: 'custom_ipxe' }, 'custom_ipxe needs an ipxe_script_url');
    expect((await t.api.post(path, { ...device, operating_system: 'custom_ipxe', ipxe_script_url: 'http://boot/x.ipxe' })).status).toBe(
      201,
    );
    expect((await t.api.post(path, { ...device, operating_system: 'custom_ipxe', userdata: '#!ipxe\nchain http://boot/x' })).status).toBe(
      201,
    );
  });

  test('the device list filters by mac_address, reserved and has_termination_time instead of ignoring them', async () => {
    const t = sim();
    const d = await createActiveDevice(t, { hostname: 'by-mac' });
    const other = await createActiveDevice(t, { hostname: 'not-by-mac' });
    const mac = portByName(d, 'eth1').data.mac ?? '';
    const list = async (query: string) =>
      (await t.api.get<{ devices: DeviceWire[] }>(`/projects/${t.projectId}/devices?per_page=1000&${query}`)).body.devices.map(
        (x) => x.hostname,
      );
    expect(await list(`mac_address=${mac.toUpperCase()}`)).toEqual(['by-mac']);
    expect(await list('reserved=true')).toEqual([]);
    expect(await list('has_termination_time=true')).toEqual([]);
    expect(await list('reserved=false')).toEqual(expect.arrayContaining(['by-mac', other.hostname]));
  });
});

describeContract(sim);
