import { param, requireDevice, requireProject } from '../access.js';
import { enforce, unprocessable } from '../errors.js';
import { checkDeviceDeletable, checkNotDeprovisioning } from '../rules/device-deletion.js';
import { checkIpAssignable } from '../rules/ip-assignment.js';
import { json, noContent, route, type RouteContext, type RouteDef } from '../http.js';
import {
  bodyFields,
  optBoolean,
  optList,
  optRecord,
  optString,
  optStringArray,
  queryBoolean,
  queryList,
  reqString,
  type Fields,
} from '../input.js';
import { paginate, readPage } from '../pagination.js';
import { containsCidr, familyBits, isAligned, overlaps, parseAddress, type Cidr } from '../ip-math.js';
import type { Device, IpAssignment } from '../models.js';
import { facilityCode } from '../render/facility.js';
import { renderDevice, renderEvent, renderIpAssignment } from '../render/device.js';
import { renderSpecMetadata } from '../render/metadata.js';
import { readAddressRequests } from '../address-requests.js';

const BILLING_CYCLES = ['hourly', 'daily', 'monthly', 'yearly'];

function billingCycle(f: Fields): string | undefined {
  const cycle = optString(f, 'billing_cycle');
  if (cycle !== undefined && !BILLING_CYCLES.includes(cycle))
    throw unprocessable(`billing_cycle must be one of ${BILLING_CYCLES.join(', ')}`);
  return cycle;
}

/**
 * Custom iPXE boots the script at `ipxe_script_url`, or user data starting `#!ipxe` (Metal docs,
 * "Custom iPXE"); without either there is nothing to boot (refusing it is a guess).
 */
function checkIpxe(os: string, scriptUrl: string | undefined, userdata: string | undefined): void {
  if (os !== 'custom_ipxe') return;
  if ((scriptUrl ?? '') !== '' || (userdata ?? '').startsWith('#!ipxe')) return;
  throw unprocessable('custom_ipxe needs an ipxe_script_url or user data starting with #!ipxe');
}

function include(ctx: RouteContext): Set<string> {
  return queryList(ctx.req.query, 'include');
}

function createDevice(ctx: RouteContext) {
  const project = requireProject(ctx, param(ctx, 'id'));
  const f = bodyFields(ctx.req);
  if (f['facility'] !== undefined && f['metro'] === undefined) {
    throw unprocessable('facility-based provisioning is not offered by this simulator; give a metro');
  }
  const metroRef = reqString(f, 'metro');
  const metro = metroRef === 'any' ? [...ctx.store.metros.values()][0] : ctx.store.metroByRef(metroRef);
  if (metro === undefined) throw unprocessable(`metro ${metroRef} not found`);
  const planSlug = reqString(f, 'plan');
  const plan = ctx.store.plans.get(planSlug);
  if (plan === undefined) throw unprocessable(`plan ${planSlug} is not available in metro ${metro.code}`);
  const osSlug = reqString(f, 'operating_system');
  // The API's words for an unknown slug (terraform-equinix-metal-anthos-on-baremetal#59, a 422).
  const operatingSystem = ctx.store.operatingSystems.get(osSlug);
  if (operatingSystem === undefined) throw unprocessable(`${osSlug} is not a valid operating system`);
  const reservation = optString(f, 'hardware_reservation_id');
  if (reservation !== undefined && reservation !== '') throw unprocessable(`hardware reservation ${reservation} not found`);
  checkIpxe(operatingSystem.slug, optString(f, 'ipxe_script_url'), optString(f, 'userdata'));
  const device = ctx.store.createDevice({
    projectId: project.id,
    plan,
    metro,
    operatingSystem,
    hostname: optString(f, 'hostname'),
    description: optString(f, 'description') ?? '',
    billingCycle: billingCycle(f) ?? 'hourly',
    userdata: optString(f, 'userdata') ?? '',
    customdata: optRecord(f, 'customdata') ?? {},
    tags: optStringArray(f, 'tags') ?? [],
    locked: optBoolean(f, 'locked') ?? false,
    networkFrozen: optBoolean(f, 'network_frozen') ?? false,
    addresses: readAddressRequests(optList(f, 'ip_addresses'), { requirePrivate: true }),
  });
  return json(201, renderDevice(ctx.store, device, include(ctx)));
}

function updateDevice(ctx: RouteContext) {
  const device = requireDevice(ctx, param(ctx, 'id'));
  const f = bodyFields(ctx.req);
  enforce(checkNotDeprovisioning(device));
  ctx.store.updateDevice(device, {
    hostname: optString(f, 'hostname'),
    description: optString(f, 'description'),
    userdata: optString(f, 'userdata'),
    tags: optStringArray(f, 'tags'),
    customdata: optRecord(f, 'customdata'),
    locked: optBoolean(f, 'locked'),
    networkFrozen: optBoolean(f, 'network_frozen'),
    billingCycle: billingCycle(f),
  });
  return json(200, renderDevice(ctx.store, device, include(ctx)));
}

/**
 * Assigns an address of one of the project's reservations to a device (an elastic IP: CAPP puts
 * the cluster's control-plane VIP on its first control-plane device this way). `address` is an
 * address or a CIDR inside the reservation; without a prefix it is a single address.
 */
function createIpAssignment(ctx: RouteContext) {
  const device = requireDevice(ctx, param(ctx, 'id'));
  const f = bodyFields(ctx.req);
  const text = reqString(f, 'address');
  const bond0Type = ctx.store.networkTypeOf(ctx.store.addressBond(device));
  enforce(checkIpAssignable({ hostname: device.hostname, address: text, state: device.state, bond0Type }));
  const [addressText = '', prefixText] = text.split('/');
  const addr = parseAddress(addressText);
  if (addr === undefined) throw unprocessable(`address ${text} is not an IP address`);
  const prefix = prefixText === undefined ? familyBits(addr.family) : Number(prefixText);
  const block: Cidr = { family: addr.family, network: addr.value, prefix };
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > familyBits(addr.family) || !isAligned(block)) {
    throw unprocessable(`address ${text} is not a valid address or network`);
  }
  const reservation = [...ctx.store.reservations.values()].find(
    (r) =>
      r.projectId === device.projectId &&
      r.type !== 'vrf' &&
      r.family === addr.family &&
      containsCidr({ family: r.family, network: r.network, prefix: r.prefix }, block),
  );
  if (reservation === undefined) throw unprocessable(`address ${text} is not in an IP reservation of the device's project`);
  if (reservation.type !== 'global_ipv4' && reservation.metroCode !== device.metroCode) {
    throw unprocessable(`the reservation of ${text} is in metro ${reservation.metroCode}, the device in ${device.metroCode}`);
  }
  for (const d of ctx.store.devices.values()) {
    if (
      d.ipAssignments.some(
        (a) => a.reservationId === reservation.id && overlaps({ family: a.family, network: a.network, prefix: a.prefix }, block),
      )
    ) {
      throw unprocessable(`address ${text} is already assigned to device ${d.hostname}`);
    }
  }
  const assignment: IpAssignment = {
    id: ctx.store.ids.uuid(),
    family: addr.family,
    public: reservation.type !== 'private_ipv4',
    management: false,
    network: addr.value,
    prefix,
    parent: { network: reservation.network, prefix: reservation.prefix },
    createdAt: ctx.store.nowIso(),
    reservationId: reservation.id,
  };
  ctx.store.addIpAssignment(device, assignment);
  return json(201, renderIpAssignment(ctx.store, device, assignment));
}

function macMatches(ctx: RouteContext, d: Device, mac: string): boolean {
  return ctx.store.devicePorts(d).some((p) => p.mac?.toLowerCase() === mac.toLowerCase());
}

export const deviceRoutes: readonly RouteDef[] = [
  route('findProjectDevices', 'GET /projects/{id}/devices', (ctx) => {
    const project = requireProject(ctx, param(ctx, 'id'));
    const q = ctx.req.query;
    const matches = [...ctx.store.devices.values()].filter(
      (d) =>
        d.projectId === project.id &&
        (q.get('hostname') === null || d.hostname === q.get('hostname')) &&
        (q.get('metro') === null || d.metroCode === q.get('metro')?.toLowerCase()) &&
        (q.get('tag') === null || d.tags.includes(q.get('tag') ?? '')) &&
        (q.get('search') === null || d.hostname.includes(q.get('search') ?? '') || d.id === q.get('search')) &&
        (q.get('facility') === null || facilityCode(d.metroCode) === q.get('facility')) &&
        (q.get('mac_address') === null || macMatches(ctx, d, q.get('mac_address') ?? '')) &&
        // No device sits on a hardware reservation or has a termination time here.
        queryBoolean(q, 'reserved') !== true &&
        queryBoolean(q, 'has_termination_time') !== true,
    );
    const page = paginate(matches, ctx.req, readPage(ctx.req, { perPage: 10, maxPerPage: 1000 }));
    return json(200, { devices: page.items.map((d) => renderDevice(ctx.store, d, include(ctx))), meta: page.meta });
  }),
  route('createDevice', 'POST /projects/{id}/devices', createDevice),
  route('findDeviceById', 'GET /devices/{id}', (ctx) =>
    json(200, renderDevice(ctx.store, requireDevice(ctx, param(ctx, 'id')), include(ctx))),
  ),
  route('updateDevice', 'PUT /devices/{id}', updateDevice),
  route('deleteDevice', 'DELETE /devices/{id}', (ctx) => {
    const device = requireDevice(ctx, param(ctx, 'id'));
    enforce(checkDeviceDeletable(device));
    ctx.store.deleteDevice(device);
    return noContent();
  }),
  route('findDeviceEvents', 'GET /devices/{id}/events', (ctx) => {
    const device = requireDevice(ctx, param(ctx, 'id'));
    const newestFirst = [...device.events].reverse();
    const page = paginate(newestFirst, ctx.req, readPage(ctx.req, { perPage: 10, maxPerPage: 1000 }));
    return json(200, { events: page.items.map((e) => renderEvent(device, e)), meta: page.meta });
  }),
  route('findDeviceMetadataByID', 'GET /devices/{id}/metadata', (ctx) =>
    json(200, renderSpecMetadata(ctx.store, requireDevice(ctx, param(ctx, 'id')))),
  ),
  route('createIPAssignment', 'POST /devices/{id}/ips', createIpAssignment),
  route('findDeviceUserdataByID', 'GET /devices/{id}/userdata', (ctx) =>
    json(200, { userdata: requireDevice(ctx, param(ctx, 'id')).userdata }),
  ),
];
