import type { Device, DeviceEvent, IpAssignment } from '../models.js';
import type { SimulatorStore } from '../store.js';
import type { DeviceWire, EventWire, IpAssignmentWire } from '../wire.js';
import { formatAddress, netmask } from '../ip-math.js';
import { blockFacts, hrefOf, link, renderMetro } from './common.js';
import { renderFacility } from './facility.js';
import { renderPort } from './port.js';
import { renderProject } from './project.js';

/**
 * A device. `include` names nested objects to expand: `project`, and for the ports
 * `network_ports.virtual_networks` / `network_ports.native_virtual_network`.
 */
export function renderDevice(store: SimulatorStore, d: Device, include: ReadonlySet<string>): DeviceWire {
  const metro = store.metroOf(d.metroCode);
  const plan = store.plans.get(d.planSlug);
  if (plan === undefined) throw new Error(`internal: device ${d.id} has unknown plan ${d.planSlug}`);
  const portInclude = new Set([...include].filter((i) => i.startsWith('network_ports.')).map((i) => i.slice('network_ports.'.length)));
  const project = store.projects.get(d.projectId);
  const os = store.operatingSystemOf(d);
  return {
    id: d.id,
    href: hrefOf('devices', d.id),
    short_id: d.shortId,
    hostname: d.hostname,
    description: d.description,
    state: d.state,
    billing_cycle: d.billingCycle,
    always_pxe: false,
    locked: d.locked,
    network_frozen: d.networkFrozen,
    network_type: store.deviceNetworkType(d),
    bonding_mode: 4,
    userdata: d.userdata,
    customdata: d.customdata,
    tags: [...d.tags],
    created_at: d.createdAt,
    updated_at: d.updatedAt,
    iqn: `iqn.2026-01.net.packet:device.${d.shortId}`,
    switch_uuid: d.switchUuid,
    provisioning_percentage: d.state === 'active' ? 100 : d.state === 'provisioning' ? 50 : 0,
    metro: renderMetro(metro),
    facility: renderFacility(metro),
    plan: {
      id: plan.id,
      slug: plan.slug,
      name: plan.name,
      class: plan.slug,
      line: 'baremetal',
      type: 'standard',
      href: hrefOf('plans', plan.id),
    },
    operating_system: {
      id: store.operatingSystemId(os.slug),
      slug: os.slug,
      name: os.name,
      distro: os.distro,
      version: os.version,
    },
    project: include.has('project') && project !== undefined ? renderProject(store, project) : link('projects', d.projectId),
    project_lite: link('projects', d.projectId),
    ip_addresses: d.ipAssignments.map((a) => renderIpAssignment(store, d, a)),
    network_ports: store.devicePorts(d).map((p) => renderPort(store, p, portInclude)),
    ssh_keys: [],
    volumes: [],
    actions: [],
  };
}

export function renderIpAssignment(store: SimulatorStore, d: Device, a: IpAssignment): IpAssignmentWire {
  const facts = blockFacts(a.family, a.network, a.prefix);
  return {
    id: a.id,
    href: `/metal/v1/ips/${a.id}`,
    type: 'IPAssignment',
    address_family: a.family,
    address: facts.address,
    network: facts.network,
    cidr: a.prefix,
    netmask: facts.netmask,
    gateway: facts.gateway,
    public: a.public,
    management: a.management,
    manageable: true,
    enabled: true,
    global_ip: false,
    state: 'active',
    created_at: a.createdAt,
    assigned_to: link('devices', d.id),
    metro: renderMetro(store.metroOf(d.metroCode)),
    parent_block: {
      network: formatAddress(a.family, a.parent.network),
      netmask: netmask(a.family, a.parent.prefix),
      cidr: a.parent.prefix,
      href: `/metal/v1/ips/${d.projectId}`,
    },
  };
}

export function renderEvent(d: Device, e: DeviceEvent): EventWire {
  return {
    id: e.id,
    href: hrefOf('events', e.id),
    type: e.type,
    state: e.state,
    body: e.body,
    interpolated: e.interpolated,
    created_at: e.createdAt,
    relationships: [link('devices', d.id)],
  };
}
