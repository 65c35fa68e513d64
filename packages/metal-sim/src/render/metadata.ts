// Two views of what a device knows about itself. The metadata service document is what a first-boot
// script fetches from the host (metadata.platformequinix.com/metadata in the real service); the
// API's `GET /devices/{id}/metadata` returns the spec's `Metadata` schema, which lists addresses as
// strings and nests bonding one level deeper.

import type { Device } from '../models.js';
import type { SimulatorStore } from '../store.js';
import { blockFacts } from './common.js';
import { renderIpAssignment } from './device.js';
import { facilityCode } from './facility.js';

export interface MetadataUrls {
  readonly apiUrl: string;
  readonly userStateUrl: string;
  readonly phoneHomeUrl: string;
  readonly userdataUrl: string;
}

function interfaces(store: SimulatorStore, d: Device): { name: string; mac: string; bond: string | null }[] {
  return store
    .devicePorts(d)
    .filter((p) => p.kind === 'physical')
    .map((p) => ({ name: p.name, mac: p.mac ?? '', bond: p.bonded ? p.bondName : null }));
}

function bonding(store: SimulatorStore, d: Device): { mode: number; link_aggregation: string; mac: string } {
  const physical = store.devicePorts(d).filter((p) => p.kind === 'physical');
  const anyBonded = physical.some((p) => p.bonded);
  return { mode: 4, link_aggregation: anyBonded ? 'mlag_ha' : 'individual', mac: physical[0]?.mac ?? '' };
}

function operatingSystem(store: SimulatorStore, d: Device): { slug: string; distro: string; version: string; image_tag: string } {
  const os = store.operatingSystemOf(d);
  return { slug: os.slug, distro: os.distro, version: os.version, image_tag: os.slug };
}

/** The metadata service's document (shape per the hollow-metadataservice fixtures and Equinix docs). */
export function renderMetadataDocument(store: SimulatorStore, d: Device, urls: MetadataUrls): Record<string, unknown> {
  const gateways = store
    .devicePorts(d)
    .flatMap((p) => p.vlans.map((a) => a.vlanId))
    .flatMap((vlanId) => store.gatewaysOfVlan(vlanId))
    .map((g) => {
      const r = store.reservations.get(g.ipReservationId);
      const facts = r === undefined ? undefined : blockFacts(r.family, r.network, Math.min(r.prefix, r.family === 4 ? 30 : 126));
      return {
        id: g.id,
        vlan: store.vlanOf(g.vlanId).vxlan,
        gateway_address: facts === undefined ? '' : `${facts.gateway}/${r?.prefix ?? ''}`,
      };
    });
  return {
    id: d.id,
    hostname: d.hostname,
    iqn: `iqn.2026-01.net.packet:device.${d.shortId}`,
    operating_system: operatingSystem(store, d),
    plan: d.planSlug,
    class: d.planSlug,
    facility: facilityCode(d.metroCode),
    metro: d.metroCode,
    private_subnets: ['10.0.0.0/8'],
    tags: [...d.tags],
    ssh_keys: [],
    customdata: d.customdata,
    state: d.state,
    switch_short_id: d.switchUuid.slice(0, 8),
    volumes: [],
    network: {
      bonding: bonding(store, d),
      interfaces: interfaces(store, d),
      addresses: d.ipAssignments.map((a) => {
        const w = renderIpAssignment(store, d, a);
        return {
          id: w.id,
          address_family: w.address_family,
          netmask: w.netmask,
          created_at: w.created_at,
          public: w.public,
          cidr: w.cidr,
          management: w.management,
          enabled: w.enabled,
          network: w.network,
          address: w.address,
          gateway: w.gateway,
          parent_block: w.parent_block,
        };
      }),
      metal_gateways: gateways,
    },
    api_url: urls.apiUrl,
    phone_home_url: urls.phoneHomeUrl,
    user_state_url: urls.userStateUrl,
    userdata_url: urls.userdataUrl,
  };
}

/** The spec's `Metadata` schema, for `GET /devices/{id}/metadata`. */
export function renderSpecMetadata(store: SimulatorStore, d: Device): Record<string, unknown> {
  return {
    id: d.id,
    hostname: d.hostname,
    iqn: `iqn.2026-01.net.packet:device.${d.shortId}`,
    class: d.planSlug,
    plan: d.planSlug,
    facility: facilityCode(d.metroCode),
    metro: d.metroCode,
    operating_system: operatingSystem(store, d),
    private_subnets: ['10.0.0.0/8'],
    reserved: false,
    specs: {},
    ssh_keys: [],
    state: d.state,
    switch_short_id: d.switchUuid.slice(0, 8),
    tags: [...d.tags],
    volumes: [],
    customdata: d.customdata,
    network: {
      addresses: d.ipAssignments.map((a) => {
        const f = blockFacts(a.family, a.network, a.prefix);
        return `${f.address}/${a.prefix}`;
      }),
      interfaces: interfaces(store, d),
      network: { bonding: bonding(store, d) },
    },
  };
}
