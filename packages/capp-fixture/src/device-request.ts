// What CAPP v0.9.0 sends when it creates a device and what it reads back (pkg/cloud/packet/
// client.go NewDevice and GetDeviceAddresses, util.go DefaultCreateTags). Pure.
import type { Cluster, Machine, PacketCluster, PacketMachine } from '@metal-l2/api';
import type { Device } from '@metal-l2/metal-api';
import type { CappDeviceCreateBody } from './capp-metal-calls.js';
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
 * cpemConfig and emlbID. For CPEM and kube-vip the endpoint is the address of the cluster's IP
 * reservation (`reservationAddress`, found by GetIPByClusterIdentifier); for EMLB it is the
 * Cluster's endpoint host.
 */
export function userDataValues(options: {
  machine: Machine;
  isControlPlane: boolean;
  token: string;
  cluster: Cluster;
  packetCluster: PacketCluster;
  reservationAddress?: string;
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
    case VipManagers.cpem:
    case VipManagers.kubeVip:
      endpoint = options.reservationAddress ?? '';
      break;
  }
  if (endpoint !== '') values['controlPlaneEndpoint'] = endpoint;
  if (cpemConfig !== '') values['cpemConfig'] = cpemConfig;
  if (emlbID !== '') values['emlbID'] = emlbID;
  return values;
}

/** Thrown for a request CAPP would send but the simulator cannot serve; it ends as CreateMachineError. */
export class DeviceRequestError extends Error {
  override readonly name = 'DeviceRequestError';
  readonly code = 'DeviceRequest';
}

/**
 * The createDevice body. Metro and facility come from the PacketMachine when it sets either,
 * else from the PacketCluster. `billing_cycle` and `ipxe_script_url` are always sent, empty when
 * unset (CAPP hands the SDK pointers to the spec's strings); the API judges them, not the fixture.
 * A facility cannot be sent: the simulator serves metro placement only, so the fixture fails such
 * a machine as an API refusal would.
 */
export function createDeviceInput(options: {
  packetMachine: PacketMachine;
  packetCluster: PacketCluster;
  tags: readonly string[];
  userdata: string;
}): CappDeviceCreateBody {
  const spec = options.packetMachine.spec;
  const clusterSpec = options.packetCluster.spec;
  const fromMachine = (spec.facility ?? '') !== '' || (spec.metro ?? '') !== '';
  const metro = (fromMachine ? spec.metro : clusterSpec.metro) ?? '';
  const facility = (fromMachine ? spec.facility : clusterSpec.facility) ?? '';
  if (facility !== '') throw new DeviceRequestError(`facility ${facility} is set: the fixture creates devices in metros only`);
  return {
    hostname: options.packetMachine.metadata.name ?? '',
    metro,
    billing_cycle: spec.billingCycle ?? '',
    plan: spec.machineType ?? '',
    operating_system: spec.os ?? '',
    ipxe_script_url: spec.ipxeURL ?? '',
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
