import { MachineNetworkConditionTypes, NetworkAnnotations, type AssignedVlan, type MachineNetwork } from '@metal-l2/api';
import { conditionIs } from './status.js';

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

/**
 * Status lost (a `clusterctl move`, a restore, a MachineNetwork re-created over a live machine)
 * is taken back from the MachineNetwork's own annotations: the VLANs this controller assigned and
 * the device they are on, so a later deletion still unassigns exactly its own VLANs. That the
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
  // No empty map where there were no annotations: the API server returns none for an empty map,
  // so `{}` here would differ from every copy it returns and each write would send a metadata
  // patch that changes nothing (a whole request per checkpoint, most of a rollout's writes).
  if (Object.keys(annotations).length > 0 || mn.metadata.annotations !== undefined) mn.metadata.annotations = annotations;
}
