import type { BgpConfig, BgpSession, Device } from '../models.js';
import type { HrefWire } from '../wire.js';
import { hrefOf, link } from './common.js';

export interface BgpSessionWire {
  id: string;
  href: string;
  address_family: 'ipv4' | 'ipv6';
  default_route: boolean;
  device: HrefWire;
  learned_routes: string[];
  status: string;
  created_at: string;
  updated_at: string;
}

export interface BgpConfigWire {
  id: string;
  href: string;
  asn: number;
  deployment_type: 'local' | 'global';
  status: 'requested' | 'enabled';
  md5: string | null;
  max_prefix: number;
  route_object?: string;
  project: HrefWire;
  ranges: [];
  sessions: BgpSessionWire[];
  created_at: string;
  requested_at: string;
}

/**
 * No BGP speaker answers in the simulator, so a session stays at the status every session starts
 * with ("Each status will start with \"unknown\"", the spec) and learns no routes.
 */
export function renderBgpSession(device: Device, s: BgpSession): BgpSessionWire {
  return {
    id: s.id,
    href: hrefOf('bgp/sessions', s.id),
    address_family: s.addressFamily,
    default_route: s.defaultRoute,
    device: link('devices', device.id),
    learned_routes: [],
    status: 'unknown',
    created_at: s.createdAt,
    updated_at: s.createdAt,
  };
}

/** Sessions of the project's devices are listed with the config (the API has been seen leaving them out: packngo#123). */
export function renderBgpConfig(config: BgpConfig, devices: readonly Device[]): BgpConfigWire {
  return {
    id: config.id,
    href: hrefOf('bgp-configs', config.id),
    asn: config.asn,
    deployment_type: config.deploymentType,
    status: config.status,
    md5: config.md5 ?? null,
    max_prefix: 10,
    project: link('projects', config.projectId),
    ranges: [],
    sessions: devices.flatMap((d) => d.bgpSessions.map((s) => renderBgpSession(d, s))),
    created_at: config.createdAt,
    requested_at: config.createdAt,
  };
}
