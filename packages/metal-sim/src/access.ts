// Who may see what. A token grants some projects (or all); an object of a project the token does
// not grant answers 403 where the spec lists 403 for the operation and 404 where it does not, so
// the answers stay inside the contract. Unknown ids answer 404.

import { forbidden, notFound } from './errors.js';
import type { RouteContext } from './http.js';
import type { Device, IpReservation, MetalGateway, Port, Project, TokenGrant, VirtualNetwork, Vrf } from './models.js';

export function canAccess(grant: TokenGrant, projectId: string): boolean {
  return grant.projectIds === 'all' || grant.projectIds.has(projectId);
}

function guard<T extends { readonly projectId: string }>(ctx: RouteContext, obj: T | undefined, kind: string): T {
  if (obj === undefined) throw notFound();
  if (!canAccess(ctx.grant, obj.projectId)) {
    throw ctx.route.declares403 ? forbidden(`You are not authorized to view this ${kind}`) : notFound();
  }
  return obj;
}

export function requireProject(ctx: RouteContext, id: string): Project {
  const p = ctx.store.projects.get(id);
  return guard(ctx, p === undefined ? undefined : { ...p, projectId: p.id }, 'project');
}

export function requireDevice(ctx: RouteContext, id: string): Device {
  return guard(ctx, ctx.store.devices.get(id), 'device');
}

export function requirePort(ctx: RouteContext, id: string): { readonly port: Port; readonly device: Device } {
  const port = ctx.store.ports.get(id);
  if (port === undefined) throw notFound();
  const device = guard(ctx, ctx.store.devices.get(port.deviceId), 'port');
  return { port, device };
}

export function requireVlan(ctx: RouteContext, id: string): VirtualNetwork {
  return guard(ctx, ctx.store.vlans.get(id), 'virtual network');
}

export function requireVrf(ctx: RouteContext, id: string): Vrf {
  return guard(ctx, ctx.store.vrfs.get(id), 'VRF');
}

export function requireReservation(ctx: RouteContext, id: string): IpReservation {
  return guard(ctx, ctx.store.reservations.get(id), 'IP reservation');
}

export function requireGateway(ctx: RouteContext, id: string): MetalGateway {
  return guard(ctx, ctx.store.gateways.get(id), 'Metal Gateway');
}

/** Route parameter by name; the router guarantees the template's parameters are present. */
export function param(ctx: RouteContext, name: string): string {
  const v = ctx.req.params[name];
  if (v === undefined) throw new Error(`internal: route ${ctx.route.path} has no parameter ${name}`);
  return v;
}
