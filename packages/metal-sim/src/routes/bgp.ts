// BGP: a project's BGP config (requestBgpConfig, findBgpConfigByProject) and its devices' sessions
// (createBgpSession, findBgpSessions, findProjectBgpSessions), what CAPP's KUBE_VIP mode calls.

import { param, requireDevice, requireProject } from '../access.js';
import { enforce, unprocessable } from '../errors.js';
import { json, noContent, route, type RouteDef } from '../http.js';
import { bodyFields, optBoolean, optString, reqInteger, reqString } from '../input.js';
import { renderBgpConfig, renderBgpSession } from '../render/bgp.js';
import { checkBgpConfigRequest, checkBgpSessionCreatable } from '../rules/bgp.js';

const ADDRESS_FAMILIES = ['ipv4', 'ipv6'] as const;
const DEPLOYMENT_TYPES = ['local', 'global'] as const;
/** The spec's md5 rule: 10-20 letters and digits, at least one lowercase, one uppercase and one digit. */
const MD5_PATTERN = /^(?=.*[a-z])(?=.*[A-Z])(?=.*\d)[a-zA-Z\d]{10,20}$/;
const MAX_ASN = 4_294_967_295;

function oneOf<T extends string>(value: string, allowed: readonly T[], key: string): T {
  const found = allowed.find((a) => a === value);
  if (found === undefined) throw unprocessable(`${key} must be one of ${allowed.join(', ')}`);
  return found;
}

export const bgpRoutes: readonly RouteDef[] = [
  route('findBgpConfigByProject', 'GET /projects/{id}/bgp-config', (ctx) => {
    const project = requireProject(ctx, param(ctx, 'id'));
    const config = ctx.store.bgpConfigs.get(project.id);
    // The spec: "When BGP configuration is not enabled empty structure is returned."
    if (config === undefined) return json(200, {});
    const devices = [...ctx.store.devices.values()].filter((d) => d.projectId === project.id);
    return json(200, renderBgpConfig(config, devices));
  }),
  route('requestBgpConfig', 'POST /projects/{id}/bgp-configs', (ctx) => {
    const project = requireProject(ctx, param(ctx, 'id'));
    const f = bodyFields(ctx.req);
    const asn = reqInteger(f, 'asn');
    if (asn < 0 || asn > MAX_ASN) throw unprocessable(`asn must be between 0 and ${MAX_ASN}`);
    const deploymentType = oneOf(reqString(f, 'deployment_type'), DEPLOYMENT_TYPES, 'deployment_type');
    // CAPP v0.9.0 sends md5 "" when no password is configured (a pointer to an empty string);
    // taking "" as no password is a guess: kube-vip clusters were built that way.
    const md5 = optString(f, 'md5');
    if (md5 !== undefined && md5 !== '' && !MD5_PATTERN.test(md5)) {
      throw unprocessable('md5 must be 10-20 letters and digits with at least one lowercase, one uppercase and one digit');
    }
    enforce(checkBgpConfigRequest(ctx.store.bgpConfigs.get(project.id)));
    ctx.store.setBgpConfig({
      id: ctx.store.ids.uuid(),
      projectId: project.id,
      asn,
      deploymentType,
      // The spec: "Local deployments are configured immediately. Global deployments will need to be reviewed."
      status: deploymentType === 'local' ? 'enabled' : 'requested',
      md5: md5 === '' ? undefined : md5,
      useCase: optString(f, 'use_case'),
      createdAt: ctx.store.nowIso(),
    });
    return noContent();
  }),
  route('findProjectBgpSessions', 'GET /projects/{id}/bgp/sessions', (ctx) => {
    const project = requireProject(ctx, param(ctx, 'id'));
    const devices = [...ctx.store.devices.values()].filter((d) => d.projectId === project.id);
    return json(200, { bgp_sessions: devices.flatMap((d) => d.bgpSessions.map((s) => renderBgpSession(d, s))) });
  }),
  route('findBgpSessions', 'GET /devices/{id}/bgp/sessions', (ctx) => {
    const device = requireDevice(ctx, param(ctx, 'id'));
    return json(200, { bgp_sessions: device.bgpSessions.map((s) => renderBgpSession(device, s)) });
  }),
  route('createBgpSession', 'POST /devices/{id}/bgp/sessions', (ctx) => {
    const device = requireDevice(ctx, param(ctx, 'id'));
    const f = bodyFields(ctx.req);
    // The spec does not require address_family; every client seen sends it (refusing its absence is a guess).
    const addressFamily = oneOf(reqString(f, 'address_family'), ADDRESS_FAMILIES, 'address_family');
    enforce(
      checkBgpSessionCreatable({
        hostname: device.hostname,
        addressFamily,
        projectBgp: ctx.store.bgpConfigs.get(device.projectId),
        existingFamilies: device.bgpSessions.map((s) => s.addressFamily),
      }),
    );
    const session = {
      id: ctx.store.ids.uuid(),
      addressFamily,
      defaultRoute: optBoolean(f, 'default_route') ?? false,
      createdAt: ctx.store.nowIso(),
    };
    ctx.store.addBgpSession(device, session);
    return json(201, renderBgpSession(device, session));
  }),
];
