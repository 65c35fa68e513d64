// The Metal calls of CAPP v0.9.0 as its client (equinix-sdk-go metalv1, generated) puts them on
// the wire. The generated request builders add a query parameter only when the caller set it, and
// CAPP sets none: findProjectDevices and findIPReservations go out bare, so the API answers with
// its default first page (10 devices; 250 reservations) and CAPP never asks for a second one.
import { apiPath, DecodeProblem, type AnyIPReservation, type Device, type IPAssignment, type MetalClient } from '@metal-l2/metal-api';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function listField<T>(field: string): (body: unknown) => T[] {
  return (body) => {
    if (!isRecord(body)) throw new DecodeProblem(`expected a JSON object holding "${field}"`);
    const items = body[field] ?? [];
    if (!Array.isArray(items)) throw new DecodeProblem(`"${field}" is not a list`);
    return items as T[];
  };
}

function anObject<T>(what: string): (body: unknown) => T {
  return (body) => {
    if (!isRecord(body)) throw new DecodeProblem(`expected a JSON object (${what})`);
    return body as T;
  };
}

/**
 * The createDevice body CAPP builds (DeviceCreateInMetroInput with pointers to the spec's
 * fields): `billing_cycle` and `ipxe_script_url` are pointers to the PacketMachine's strings, so
 * the SDK sends them even when empty. Typed here, not with our client's input type, because CAPP
 * sends values (`""`) the spec does not allow for billing_cycle.
 */
export interface CappDeviceCreateBody {
  readonly hostname: string;
  readonly metro: string;
  readonly billing_cycle: string;
  readonly plan: string;
  readonly operating_system: string;
  readonly ipxe_script_url: string;
  readonly tags: readonly string[];
  readonly userdata: string;
}

/** `GET /projects/{id}/devices` with no query: the API's default first page only (GetDeviceByTags). */
export function findProjectDevicesFirstPage(metal: MetalClient, projectId: string): Promise<Device[]> {
  return metal.send({
    operation: 'findProjectDevices',
    method: 'GET',
    path: apiPath`/projects/${projectId}/devices`,
    decode: listField<Device>('devices'),
  });
}

/** `POST /projects/{id}/devices` with CAPP's body. */
export function createDevice(metal: MetalClient, projectId: string, body: CappDeviceCreateBody): Promise<Device> {
  return metal.send({
    operation: 'createDevice',
    method: 'POST',
    path: apiPath`/projects/${projectId}/devices`,
    body,
    decode: anObject<Device>('device'),
  });
}

/** `GET /projects/{id}/ips` with no query: the first page (default 250) of every reservation type. */
export function findIpReservationsFirstPage(metal: MetalClient, projectId: string): Promise<AnyIPReservation[]> {
  return metal.send({
    operation: 'findIPReservations',
    method: 'GET',
    path: apiPath`/projects/${projectId}/ips`,
    decode: listField<AnyIPReservation>('ip_addresses'),
  });
}

/** `POST /devices/{id}/ips` (CreateIPAssignment) with only `address`, as CPEM's step sends it. */
export function createIpAssignment(metal: MetalClient, deviceId: string, address: string): Promise<IPAssignment> {
  return metal.send({
    operation: 'createIPAssignment',
    method: 'POST',
    path: apiPath`/devices/${deviceId}/ips`,
    body: { address },
    decode: anObject<IPAssignment>('IP assignment'),
  });
}

/** `POST /devices/{id}/bgp/sessions` with `address_family: ipv4` (EnsureNodeBGPEnabled). */
export function createBgpSession(metal: MetalClient, deviceId: string): Promise<unknown> {
  return metal.send({
    operation: 'createBgpSession',
    method: 'POST',
    path: apiPath`/devices/${deviceId}/bgp/sessions`,
    body: { address_family: 'ipv4' },
    decode: anObject<unknown>('BGP session'),
  });
}

/** `GET /projects/{id}/bgp-config`: `{}` while the project has none (the spec's "empty structure"). */
export function findBgpConfigByProject(metal: MetalClient, projectId: string): Promise<{ id?: string; status?: string }> {
  return metal.send({
    operation: 'findBgpConfigByProject',
    method: 'GET',
    path: apiPath`/projects/${projectId}/bgp-config`,
    decode: anObject<{ id?: string; status?: string }>('BGP config'),
  });
}

/**
 * `POST /projects/{id}/bgp-configs` as EnableProjectBGP sends it: local, ASN 65000 (CAPP's default
 * without METAL_LOCAL_ASN), md5 `""` without METAL_BGP_PASS (a pointer to an empty string).
 */
export function requestLocalBgpConfig(metal: MetalClient, projectId: string): Promise<void> {
  return metal.send({
    operation: 'requestBgpConfig',
    method: 'POST',
    path: apiPath`/projects/${projectId}/bgp-configs`,
    body: { asn: 65000, md5: '', deployment_type: 'local', use_case: 'kubernetes-load-balancer' },
    decode: () => undefined,
  });
}
