// BGP as CAPP's KUBE_VIP mode uses it: the PacketCluster controller enables BGP on the project
// (findBgpConfigByProject, then requestBgpConfig), every machine asks for a session on its device
// (createBgpSession, a 422 "already has session" counting as done).

import { describe, expect, test } from '@jest/globals';
import { createActiveDevice, DEPROVISION_MS, describeContract, expectRefusedBy, useSimulator } from './support/harness.js';

const sim = useSimulator();
// Bodies the spec's request schema refuses: run without the contract validator.
const unchecked = useSimulator({}, { contract: false });

interface SessionWire {
  id: string;
  address_family: string;
  status: string;
  device: { href: string };
}

describe('BGP sessions and the project BGP config', () => {
  test('a session on a device of a project without BGP is refused: "BGP is not enabled"', async () => {
    const t = sim();
    const config = await t.api.get(`/projects/${t.projectId}/bgp-config`);
    expect(config).toMatchObject({ status: 200, body: {} });
    const device = await createActiveDevice(t);
    const refused = await t.api.post(`/devices/${device.id}/bgp/sessions`, { address_family: 'ipv4' });
    expectRefusedBy(t, refused, 'bgp-session-needs-project-bgp');
    expect(JSON.stringify(refused.body)).toContain('BGP is not enabled');
    expect((await t.api.get<{ bgp_sessions: SessionWire[] }>(`/devices/${device.id}/bgp/sessions`)).body.bgp_sessions).toEqual([]);
  });

  test('local BGP (ASN 65000) is enabled at once; a second request is refused', async () => {
    const t = sim();
    const body = { asn: 65000, deployment_type: 'local', use_case: 'kubernetes-load-balancer' };
    expect((await t.api.post(`/projects/${t.projectId}/bgp-configs`, body)).status).toBe(204);
    const config = await t.api.get(`/projects/${t.projectId}/bgp-config`);
    expect(config).toMatchObject({ status: 200, body: { asn: 65000, deployment_type: 'local', status: 'enabled', md5: null } });
    expectRefusedBy(t, await t.api.post(`/projects/${t.projectId}/bgp-configs`, body), 'bgp-config-exists');
  });

  test('CAPP v0.9.0\'s request (md5 "", which the spec\'s pattern refuses) is taken as no password; bad enums are refused', async () => {
    const t = unchecked();
    expect((await t.api.post(`/projects/${t.projectId}/bgp-configs`, { asn: 65000, deployment_type: 'site' })).status).toBe(422);
    expect((await t.api.post(`/projects/${t.projectId}/bgp-configs`, { asn: 65000, deployment_type: 'local', md5: 'short' })).status).toBe(
      422,
    );
    const capp = { asn: 65000, md5: '', deployment_type: 'local', use_case: 'kubernetes-load-balancer' };
    expect((await t.api.post(`/projects/${t.projectId}/bgp-configs`, capp)).status).toBe(204);
    expect((await t.api.get(`/projects/${t.projectId}/bgp-config`)).body).toMatchObject({ status: 'enabled', md5: null });
    const device = await createActiveDevice(t);
    expect((await t.api.post(`/devices/${device.id}/bgp/sessions`, { address_family: 'ipv5' })).status).toBe(422);
    expect((await t.api.post(`/devices/${device.id}/bgp/sessions`, {})).status).toBe(422);
  });

  test('with BGP enabled a device gets one session per address family, listed on the device and the project; it goes with the device', async () => {
    const t = sim();
    const device = await createActiveDevice(t);
    const created = await t.api.post<SessionWire>(`/devices/${device.id}/bgp/sessions`, { address_family: 'ipv4' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ address_family: 'ipv4', status: 'unknown', device: { href: `/metal/v1/devices/${device.id}` } });
    const again = await t.api.post(`/devices/${device.id}/bgp/sessions`, { address_family: 'ipv4' });
    expectRefusedBy(t, again, 'bgp-session-one-per-family');
    // The text CAPP v0.9.0 looks for to treat the 422 as "already enabled".
    expect(JSON.stringify(again.body)).toContain('already has session');
    expect((await t.api.post(`/devices/${device.id}/bgp/sessions`, { address_family: 'ipv6' })).status).toBe(201);

    const listed = await t.api.get<{ bgp_sessions: SessionWire[] }>(`/devices/${device.id}/bgp/sessions`);
    expect(listed.body.bgp_sessions.map((s) => s.address_family).sort()).toEqual(['ipv4', 'ipv6']);
    const ofProject = await t.api.get<{ bgp_sessions: SessionWire[] }>(`/projects/${t.projectId}/bgp/sessions`);
    expect(ofProject.body.bgp_sessions.map((s) => s.id)).toContain(created.body.id);
    const config = await t.api.get<{ sessions: SessionWire[] }>(`/projects/${t.projectId}/bgp-config`);
    expect(config.body.sessions.map((s) => s.id)).toContain(created.body.id);

    expect((await t.api.delete(`/devices/${device.id}`)).status).toBe(204);
    t.clock.advance(DEPROVISION_MS);
    const after = await t.api.get<{ bgp_sessions: SessionWire[] }>(`/projects/${t.projectId}/bgp/sessions`);
    expect(after.body.bgp_sessions.map((s) => s.id)).not.toContain(created.body.id);
    expect((await t.api.get(`/devices/${device.id}`)).status).toBe(404);
  });

  describeContract(sim);
});
