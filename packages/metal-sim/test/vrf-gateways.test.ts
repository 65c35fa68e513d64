// The objects the IPAM controller manages: a VRF with ranges, a VRF IP reservation inside them, a
// VLAN and a Metal Gateway joining the two; public reservations and private gateways; and the
// cascades the spec describes when ranges, reservations or VRFs go away.

import { describe, expect, test } from '@jest/globals';
import type { IpReservationWire, MetalGatewayWire, VirtualNetworkWire, VrfWire } from '../src/wire.js';
import { createVlan, describeContract, useSimulator } from './support/harness.js';

const sim = useSimulator();

describe('VRFs, reservations and Metal Gateways', () => {
  test('a VRF-backed gateway: VRF, reservation, VLAN, gateway, all readable back', async () => {
    const t = sim();
    const vrf = await t.api.post<VrfWire>(`/projects/${t.projectId}/vrfs`, {
      name: 'pool-a',
      metro: 'da',
      ip_ranges: ['192.168.0.0/16'],
      local_asn: 65100,
    });
    expect(vrf.status).toBe(201);
    expect(vrf.body).toMatchObject({ name: 'pool-a', ip_ranges: ['192.168.0.0/16'], local_asn: 65100, metro: { code: 'da' } });
    const r = await t.api.post<IpReservationWire>(`/projects/${t.projectId}/ips`, {
      type: 'vrf',
      vrf_id: vrf.body.id,
      network: '192.168.10.0',
      cidr: 24,
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      type: 'vrf',
      network: '192.168.10.0',
      cidr: 24,
      netmask: '255.255.255.0',
      gateway: '192.168.10.1',
      vrf: { id: vrf.body.id },
    });
    const vlan = await createVlan(t, { vxlan: 1000, description: 'pool-a' });
    const gw = await t.api.post<MetalGatewayWire>(`/projects/${t.projectId}/metal-gateways`, {
      virtual_network_id: vlan.id,
      ip_reservation_id: r.body.id,
    });
    expect(gw.status).toBe(201);
    expect(gw.body).toMatchObject({
      state: 'ready',
      virtual_network: { id: vlan.id, vxlan: 1000 },
      ip_reservation: { id: r.body.id, type: 'vrf' },
      vrf: { id: vrf.body.id },
    });

    expect((await t.api.get<MetalGatewayWire>(`/metal-gateways/${gw.body.id}`)).body.id).toBe(gw.body.id);
    const vlanNow = await t.api.get<VirtualNetworkWire>(`/virtual-networks/${vlan.id}`);
    expect(vlanNow.body.metal_gateways).toMatchObject([{ id: gw.body.id, vlan: 1000, gateway_address: '192.168.10.1/24' }]);
    const rNow = await t.api.get<IpReservationWire>(`/ips/${r.body.id}`);
    expect(rNow.body.metal_gateway).toMatchObject({ id: gw.body.id });
    expect((await t.api.get<{ ip_addresses: IpReservationWire[] }>(`/vrfs/${vrf.body.id}/ips`)).body.ip_addresses.map((x) => x.id)).toEqual(
      [r.body.id],
    );
    expect((await t.api.get<IpReservationWire>(`/vrfs/${vrf.body.id}/ips/${r.body.id}`)).body.cidr).toBe(24);
    const listed = await t.api.get<{ vrfs: VrfWire[] }>(`/projects/${t.projectId}/vrfs?metro=da`);
    expect(listed.body.vrfs.map((v) => v.id)).toContain(vrf.body.id);
    const gws = await t.api.get<{ metal_gateways: MetalGatewayWire[] }>(`/projects/${t.projectId}/metal-gateways`);
    expect(gws.body.metal_gateways.map((g) => g.id)).toEqual([gw.body.id]);

    const deleted = await t.api.delete<MetalGatewayWire>(`/metal-gateways/${gw.body.id}`);
    expect(deleted.status).toBe(202);
    expect(deleted.body.state).toBe('deleting');
    expect((await t.api.get(`/metal-gateways/${gw.body.id}`)).status).toBe(404);
    expect((await t.api.delete(`/ips/${r.body.id}`)).status).toBe(204);
    expect((await t.api.delete(`/virtual-networks/${vlan.id}`)).status).toBe(204);
    expect((await t.api.delete(`/vrfs/${vrf.body.id}`)).status).toBe(204);
  });

  test('a VLAN without vxlan gets the next free one from 1000-1999 in its metro', async () => {
    const t = sim();
    const a = await createVlan(t, { metro: 'sv' });
    const b = await createVlan(t, { metro: 'sv' });
    expect([a.vxlan, b.vxlan]).toEqual([1000, 1001]);
    const listed = await t.api.get<{ virtual_networks: VirtualNetworkWire[] }>(`/projects/${t.projectId}/virtual-networks?metro=sv`);
    expect(listed.body.virtual_networks.map((v) => v.vxlan)).toEqual([1000, 1001]);
    const updated = await t.api.put<VirtualNetworkWire>(`/virtual-networks/${a.id}`, { description: 'renamed', tags: ['t'] });
    expect(updated.body).toMatchObject({ description: 'renamed', tags: ['t'] });
  });

  test('a gateway with a private subnet creates its own block, which goes with it', async () => {
    const t = sim();
    const vlan = await createVlan(t, { vxlan: 1100 });
    const gw = await t.api.post<MetalGatewayWire>(`/projects/${t.projectId}/metal-gateways`, {
      virtual_network_id: vlan.id,
      private_ipv4_subnet_size: 16,
    });
    expect(gw.status).toBe(201);
    expect(gw.body.ip_reservation).toMatchObject({ type: 'private_ipv4', cidr: 28 });
    await t.api.delete(`/metal-gateways/${gw.body.id}`);
    expect((await t.api.get(`/ips/${gw.body.ip_reservation.id}`)).status).toBe(404);
  });

  test('a public /29 can back a gateway; public reservations list by type', async () => {
    const t = sim();
    const r = await t.api.post<IpReservationWire>(`/projects/${t.projectId}/ips`, {
      type: 'public_ipv4',
      metro: 'da',
      quantity: 8,
      tags: ['edge'],
    });
    expect(r.body).toMatchObject({ type: 'public_ipv4', cidr: 29, public: true, tags: ['edge'] });
    const vlan = await createVlan(t, { vxlan: 1101 });
    const gw = await t.api.post<MetalGatewayWire>(`/projects/${t.projectId}/metal-gateways`, {
      virtual_network_id: vlan.id,
      ip_reservation_id: r.body.id,
    });
    expect(gw.status).toBe(201);
    expect(gw.body.vrf).toBeUndefined();
    const listed = await t.api.get<{ ip_addresses: IpReservationWire[] }>(`/projects/${t.projectId}/ips?types=public_ipv4`);
    expect(listed.body.ip_addresses.map((x) => x.id)).toContain(r.body.id);
  });

  test('removing a VRF range deletes the reservations inside it and their gateways (spec: VrfUpdateInput)', async () => {
    const t = sim();
    const vrf = (
      await t.api.post<VrfWire>(`/projects/${t.projectId}/vrfs`, { name: 'shrink', metro: 'da', ip_ranges: ['10.1.0.0/16', '10.2.0.0/16'] })
    ).body;
    const keep = (
      await t.api.post<IpReservationWire>(`/projects/${t.projectId}/ips`, { type: 'vrf', vrf_id: vrf.id, network: '10.1.0.0', cidr: 24 })
    ).body;
    const drop = (
      await t.api.post<IpReservationWire>(`/projects/${t.projectId}/ips`, { type: 'vrf', vrf_id: vrf.id, network: '10.2.0.0', cidr: 24 })
    ).body;
    const vlan = await createVlan(t, { vxlan: 1102 });
    const gw = (
      await t.api.post<MetalGatewayWire>(`/projects/${t.projectId}/metal-gateways`, {
        virtual_network_id: vlan.id,
        ip_reservation_id: drop.id,
      })
    ).body;
    const updated = await t.api.put<VrfWire>(`/vrfs/${vrf.id}`, { ip_ranges: ['10.1.0.0/16'], description: 'smaller' });
    expect(updated.body).toMatchObject({ ip_ranges: ['10.1.0.0/16'], description: 'smaller' });
    expect((await t.api.get(`/ips/${keep.id}`)).status).toBe(200);
    expect((await t.api.get(`/ips/${drop.id}`)).status).toBe(404);
    expect((await t.api.get(`/metal-gateways/${gw.id}`)).status).toBe(404);
    expect((await t.api.delete(`/vrfs/${vrf.id}`)).status).toBe(204);
    expect((await t.api.get(`/ips/${keep.id}`)).status).toBe(404);
  });
});

describeContract(sim);
