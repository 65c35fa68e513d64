// The planner's output: Metal API calls, each named by the spec's operationId, in the order they
// must run. Calls name ports and VLANs by id (what the API takes) and by name/vxlan (what people
// read in logs and events).

import type { PortConvertLayer3RequestIp } from '../types.js';
import type { VlanRef } from './port-state.js';

export interface PortCallTarget {
  portId: string;
  portName: string;
}

export interface PlannedVlanAssignment {
  vlan: VlanRef;
  state: 'assigned' | 'unassigned';
}

export type PortCall =
  | (PortCallTarget & { operation: 'deleteNativeVlan' })
  | (PortCallTarget & { operation: 'createPortVlanAssignmentBatch'; vlanAssignments: readonly PlannedVlanAssignment[] })
  | (PortCallTarget & { operation: 'disbondPort'; bulk: boolean })
  | (PortCallTarget & { operation: 'convertLayer2' })
  | (PortCallTarget & { operation: 'bondPort'; bulk: boolean })
  | (PortCallTarget & { operation: 'convertLayer3'; requestIps: readonly PortConvertLayer3RequestIp[] })
  | (PortCallTarget & { operation: 'assignNativeVlan'; vlan: VlanRef });

/** One line per call for logs, events and tests: "disbondPort eth1", "createPortVlanAssignmentBatch bond0 -1000 +1001". */
export function describePortCall(call: PortCall): string {
  const head = `${call.operation} ${call.portName}`;
  switch (call.operation) {
    case 'deleteNativeVlan':
    case 'convertLayer2':
    case 'convertLayer3':
      return head;
    case 'disbondPort':
    case 'bondPort':
      return call.bulk ? `${head} bulk` : head;
    case 'createPortVlanAssignmentBatch':
      return [head, ...call.vlanAssignments.map((a) => `${a.state === 'assigned' ? '+' : '-'}${vlanName(a.vlan)}`)].join(' ');
    case 'assignNativeVlan':
      return `${head} ${vlanName(call.vlan)}`;
  }
}

function vlanName(vlan: VlanRef): string {
  return vlan.vxlan === undefined ? vlan.id : String(vlan.vxlan);
}
