import {
  MachineNetworkConditionTypes,
  MachineNetworkReasons,
  NetworkAnnotations,
  type AssignedVlan,
  type MachineNetwork,
} from '@metal-l2/api';
import { conditionIs, markCondition } from './status.js';

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
 * Status lost (a `clusterctl move`, a restore) is taken back from the MachineNetwork's own
 * annotations: the VLANs this controller assigned, and that the ports of this very device were
 * configured. A moved machine then makes no Metal call at all, and a later deletion still
 * unassigns exactly its own VLANs.
 */
export function restoreRecord(mn: MachineNetwork, deviceId: string | undefined, now: Date): void {
  const annotations = mn.metadata.annotations ?? {};
  const status = (mn.status ??= {});
  if (status.assignedVlans === undefined) {
    const assigned = parseAssigned(annotations[NetworkAnnotations.assignedVlans]);
    if (assigned !== undefined && assigned.length > 0) status.assignedVlans = assigned;
  }
  const configuredOn = annotations[NetworkAnnotations.portsConfigured];
  if (configuredOn === undefined || status.deviceID !== undefined) return;
  // The device of the record: a deletion (the PacketMachine may be gone) needs it to unassign.
  status.deviceID = configuredOn;
  if (deviceId === configuredOn && status.conditions?.some((c) => c.type === MachineNetworkConditionTypes.portsConfigured) !== true) {
    markCondition(
      mn,
      {
        type: MachineNetworkConditionTypes.portsConfigured,
        status: 'True',
        reason: MachineNetworkReasons.portsConfigured,
        message: `ports of device ${deviceId} were configured (recorded on this object)`,
      },
      now,
    );
  }
}

/** Writes the record the status holds into the annotations (sent with the same patch). */
export function keepRecord(mn: MachineNetwork): void {
  const annotations = { ...(mn.metadata.annotations ?? {}) };
  const assigned = mn.status?.assignedVlans ?? [];
  if (assigned.length > 0) annotations[NetworkAnnotations.assignedVlans] = JSON.stringify(assigned);
  else delete annotations[NetworkAnnotations.assignedVlans];
  const deviceId = mn.status?.deviceID;
  if (deviceId !== undefined && conditionIs(mn, MachineNetworkConditionTypes.portsConfigured, 'True'))
    annotations[NetworkAnnotations.portsConfigured] = deviceId;
  else if (deviceId !== undefined && annotations[NetworkAnnotations.portsConfigured] !== deviceId)
    delete annotations[NetworkAnnotations.portsConfigured];
  mn.metadata.annotations = annotations;
}
