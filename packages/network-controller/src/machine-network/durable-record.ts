import {
  MachineNetworkConditionTypes,
  NetworkAnnotations,
  type AnnouncedEndpoint,
  type AssignedVlan,
  type MachineNetwork,
  type MachineNetworkStatus,
} from '@metal-l2/api';
import { conditionIs } from './scope.js';

type UserDataRecord = NonNullable<MachineNetworkStatus['userData']>;

function parseAssigned(text: string | undefined): AssignedVlan[] | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed)) return undefined;
    return parsed.filter(
      (v): v is AssignedVlan =>
        typeof v === 'object' &&
        v !== null &&
        typeof (v as AssignedVlan).portID === 'string' &&
        typeof (v as AssignedVlan).vlanID === 'string' &&
        typeof (v as AssignedVlan).vxlan === 'number',
    );
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInteger = (v: unknown): v is number => Number.isInteger(v);

function parseEndpoint(v: unknown): AnnouncedEndpoint | undefined {
  if (!isObject(v) || typeof v['address'] !== 'string') return undefined;
  const { prefix, port, vxlan, virtualRouterID } = v;
  if (!isInteger(prefix) || !isInteger(port) || !isInteger(vxlan) || !isInteger(virtualRouterID)) return undefined;
  return { address: v['address'], prefix, port, vxlan, virtualRouterID };
}

/** The injection record kept in metadata; undefined when it is missing or cannot be read (then it is not trusted). */
function parseInjected(text: string | undefined): UserDataRecord | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(parsed) || typeof parsed['hash'] !== 'string' || typeof parsed['fingerprint'] !== 'string') return undefined;
  const { secretName, rendererVersion, announcedEndpoint } = parsed;
  const endpoint = parseEndpoint(announcedEndpoint);
  if (announcedEndpoint !== undefined && endpoint === undefined) return undefined;
  return {
    hash: parsed['hash'],
    fingerprint: parsed['fingerprint'],
    ...(typeof secretName === 'string' ? { secretName } : {}),
    ...(isInteger(rendererVersion) ? { rendererVersion } : {}),
    ...(endpoint === undefined ? {} : { announcedEndpoint: endpoint }),
  };
}

/** The injection record of a MachineNetwork, once it has a fingerprint (a checked record), as kept in metadata. */
export function injectedRecord(mn: MachineNetwork): string | undefined {
  const u = mn.status?.userData;
  if (u?.hash === undefined || u.fingerprint === undefined) return undefined;
  const e = u.announcedEndpoint;
  // Fields in a fixed order: status read back from the API server has its keys sorted, and the same
  // record must give the same text, or every write would patch the annotation.
  return JSON.stringify({
    secretName: u.secretName,
    hash: u.hash,
    rendererVersion: u.rendererVersion,
    fingerprint: u.fingerprint,
    announcedEndpoint:
      e === undefined
        ? undefined
        : { address: e.address, prefix: e.prefix, port: e.port, vxlan: e.vxlan, virtualRouterID: e.virtualRouterID },
  });
}

/**
 * Status lost (a `clusterctl move`, a restore, a MachineNetwork re-created over a live machine)
 * is taken back from the MachineNetwork's own annotations: the VLANs this controller assigned and
 * the device they are on, so a later deletion still unassigns exactly its own VLANs; and what the
 * device booted with (status.userData), so a machine injected by another release is not taken for
 * one whose addresses changed, and the endpoint it announces is still known. That the
 * ports were configured is not restored: PortsConfigured comes from a read of the device, so the
 * first reconcile after a restore reads it once (and makes no write when it matches).
 */
export function restoreRecord(mn: MachineNetwork): void {
  const annotations = mn.metadata.annotations ?? {};
  const status = (mn.status ??= {});
  if (status.assignedVlans === undefined) {
    const assigned = parseAssigned(annotations[NetworkAnnotations.assignedVlans]);
    if (assigned !== undefined && assigned.length > 0) status.assignedVlans = assigned;
  }
  const configuredOn = annotations[NetworkAnnotations.portsConfigured];
  // The device of the record: a deletion (the PacketMachine may be gone) needs it to unassign.
  if (configuredOn !== undefined && status.deviceID === undefined) status.deviceID = configuredOn;
  if (status.userData === undefined) {
    const injected = parseInjected(annotations[NetworkAnnotations.injectedConfig]);
    if (injected !== undefined) status.userData = injected;
  }
}

/** The assigned-VLANs record of a MachineNetwork, for handing it over to the next one (keep-network.ts). */
export function assignedRecord(mn: MachineNetwork): string | undefined {
  const assigned = mn.status?.assignedVlans ?? [];
  return assigned.length === 0 ? undefined : JSON.stringify(assigned);
}

/** Writes the record the status holds into the annotations (sent with the same patch). */
export function keepRecord(mn: MachineNetwork): void {
  const annotations = { ...(mn.metadata.annotations ?? {}) };
  const assigned = assignedRecord(mn);
  if (assigned !== undefined) annotations[NetworkAnnotations.assignedVlans] = assigned;
  else delete annotations[NetworkAnnotations.assignedVlans];
  const deviceId = mn.status?.deviceID;
  if (deviceId !== undefined && conditionIs(mn, MachineNetworkConditionTypes.portsConfigured, 'True'))
    annotations[NetworkAnnotations.portsConfigured] = deviceId;
  else if (deviceId !== undefined && annotations[NetworkAnnotations.portsConfigured] !== deviceId)
    delete annotations[NetworkAnnotations.portsConfigured];
  // Only ever replaced by a newer checked record: a status without one (not injected yet) keeps none.
  const injected = injectedRecord(mn);
  if (injected !== undefined) annotations[NetworkAnnotations.injectedConfig] = injected;
  // No empty map where there were no annotations: the API server returns none for an empty map,
  // so `{}` here would differ from every copy it returns and each write would send a metadata
  // patch that changes nothing (a whole request per checkpoint, most of a rollout's writes).
  if (Object.keys(annotations).length > 0 || mn.metadata.annotations !== undefined) mn.metadata.annotations = annotations;
}
