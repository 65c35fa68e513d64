// What CAPP v0.9.0 sends when it creates a device and what it reads back (pkg/cloud/packet/
// client.go NewDevice and GetDeviceAddresses, util.go DefaultCreateTags). Pure.
import type { Cluster, Machine, PacketCluster, PacketMachine } from '@metal-l2/api';
import type { Device, DeviceCreateInMetroInput } from '@metal-l2/metal-api';
import { EMLB_ID_ANNOTATION, IPXE_OS, RoleTags, VipManagers } from './capp-api.js';

/**
 * The tags that identify a machine's device (DefaultCreateTags): cluster, Machine name (CAPP's
 * "machine-uid" tag holds the name) and namespace. CAPP finds an existing device by these.
 */
export function defaultCreateTags(options: { namespace: string; machineName: string; clusterName: string }): string[] {
  return [`capp:cluster-id:${options.clusterName}`, `capp:machine-uid:${options.machineName}`, `capp:namespace:${options.namespace}`];
}

/**
 * The tags of a new device: the default tags and the role tag. PacketMachine.spec.tags are not
 * among them: v0.9.0 copies them into a zero-length slice (`copy(make([]string, 0, n), ...)`),
 * which copies nothing. The fixture keeps that behaviour.
 */
export function deviceTags(defaultTags: readonly string[], isControlPlane: boolean): string[] {
  return [...defaultTags, isControlPlane ? RoleTags.controlPlane : RoleTags.worker];
}

/** ItemsInList: every wanted tag is on the device. */
export function hasAllTags(device: Device, wanted: readonly string[]): boolean {
  const tags = new Set(device.tags ?? []);
  return wanted.every((t) => tags.has(t));
}

/**
 * The template data CAPP executes the bootstrap data with: kubernetesVersion always; for
 * control-plane machines also apiKey (the Metal token) and, when non-empty, controlPlaneEndpoint,
 * cpemConfig and emlbID. For CPEM and kube-vip CAPP looks the endpoint up as the project's IP
 * reservation tagged for the cluster; the fixture takes PacketCluster.spec.controlPlaneEndpoint.host,
 * which CAPP's PacketCluster controller fills from that very reservation.
 */
export function userDataValues(options: {
  machine: Machine;
  isControlPlane: boolean;
  token: string;
  cluster: Cluster;
  packetCluster: PacketCluster;
}): Record<string, string> {
  const values: Record<string, string> = { kubernetesVersion: options.machine.spec.version ?? '' };
  if (!options.isControlPlane) return values;
  values['apiKey'] = options.token;
  const { packetCluster } = options;
  let endpoint = '';
  let cpemConfig = '';
  let emlbID = '';
  switch (packetCluster.spec.vipManager ?? VipManagers.cpem) {
    case VipManagers.emlb:
      endpoint = options.cluster.spec?.controlPlaneEndpoint?.host ?? '';
      cpemConfig = `emlb:///${packetCluster.spec.metro ?? ''}`;
      emlbID = packetCluster.metadata.annotations?.[EMLB_ID_ANNOTATION] ?? '';
      break;
    default:
      endpoint = packetCluster.spec.controlPlaneEndpoint?.host ?? '';
  }
  if (endpoint !== '') values['controlPlaneEndpoint'] = endpoint;
  if (cpemConfig !== '') values['cpemConfig'] = cpemConfig;
  if (emlbID !== '') values['emlbID'] = emlbID;
  return values;
}

const billingCycles = ['hourly', 'daily', 'monthly', 'yearly'] as const;
type BillingCycle = (typeof billingCycles)[number];
const isBillingCycle = (value: string): value is BillingCycle => (billingCycles as readonly string[]).includes(value);

/** Thrown for a request CAPP would send but the API (or the simulator) refuses; it ends as CreateMachineError. */
export class DeviceRequestError extends Error {
  override readonly name = 'DeviceRequestError';
  readonly code = 'DeviceRequest';
}

/**
 * The createDevice body. Metro and facility come from the PacketMachine when it sets either,
 * else from the PacketCluster. A facility cannot be sent: the facility input is deprecated and
 * the simulator refuses it, so the fixture fails such a machine as the API would.
 */
export function createDeviceInput(options: {
  packetMachine: PacketMachine;
  packetCluster: PacketCluster;
  tags: readonly string[];
  userdata: string;
}): DeviceCreateInMetroInput {
  const spec = options.packetMachine.spec;
  const clusterSpec = options.packetCluster.spec;
  const fromMachine = (spec.facility ?? '') !== '' || (spec.metro ?? '') !== '';
  const metro = (fromMachine ? spec.metro : clusterSpec.metro) ?? '';
  const facility = (fromMachine ? spec.facility : clusterSpec.facility) ?? '';
  if (facility !== '') throw new DeviceRequestError(`facility ${facility} is set: the fixture creates devices in metros only`);
  const billingCycle = spec.billingCycle ?? '';
  if (billingCycle !== '' && !isBillingCycle(billingCycle))
    throw new DeviceRequestError(`billing cycle "${billingCycle}" is not one the API accepts`);
  return {
    hostname: options.packetMachine.metadata.name ?? '',
    metro,
    plan: spec.machineType ?? '',
    operating_system: spec.os ?? '',
    ...(billingCycle !== '' ? { billing_cycle: billingCycle } : {}),
    ...((spec.ipxeURL ?? '') !== '' ? { ipxe_script_url: spec.ipxeURL ?? '' } : {}),
    tags: [...options.tags],
    userdata: options.userdata,
  };
}

/** NewDevice's first check: an iPXE URL needs the custom_ipxe OS. Undefined when fine. */
export function ipxeConflict(packetMachine: PacketMachine): string | undefined {
  const { ipxeURL, os } = packetMachine.spec;
  return (ipxeURL ?? '') !== '' && os !== IPXE_OS ? 'os should be set to custom_pxe when using pxe urls: invalid request' : undefined;
}

/** GetDeviceAddresses: public addresses are ExternalIP, the others InternalIP. */
export function nodeAddresses(device: Device): { type: string; address: string }[] {
  return (device.ip_addresses ?? []).map((ip) => ({ type: ip.public === true ? 'ExternalIP' : 'InternalIP', address: ip.address ?? '' }));
}
