// planPortChanges: from the ports a device reports and the ports a user wants, the Metal API calls
// that get there, in an order where every intermediate state is one the API accepts:
//
//   1. clear the native VLAN when that VLAN is about to go
//   2. unassign VLANs (one batch per port); a bond port about to return to layer 3 loses all of
//      them, since convert/layer-3 requires it ("VLANs must first be unassigned")
//   3. convert bond ports to layer 2
//   4. disbond (the whole bond in one bulk call when every member leaves it)
//   5. bond (likewise in bulk when every member rejoins)
//   6. convert bond ports to layer 3 (with request_ips)
//   7. assign VLANs (one batch per port)
//   8. set or clear the native VLAN
//
// This is the Terraform provider's order (remove VLANs, disbond, convert to L2, bond, convert to
// L3, add VLANs, native VLAN) with one change, taken from the per-transition calls in
// shared/research/capp-layer2-metal.md (c.1): a bond leaves layer 3 *before* its ports leave it
// (layer3 -> layer2-individual is "convert/layer-2, then disbond?bulk_disable=true"), so that no
// step ever asks for an unbonded layer-3 bond, which the API refuses. Terraform never meets this
// case because it changes one port at a time.
//
// Pure: no I/O, no clock. Nothing differs -> no calls.

import { DEFAULT_LAYER3_REQUEST_IPS } from '../ports.js';
import type { Device, PortConvertLayer3RequestIp, VirtualNetwork } from '../types.js';
import type { PortCall, PlannedVlanAssignment } from './calls.js';
import { resolveDesired } from './desired.js';
import type { DesiredPort } from './desired.js';
import { PORT_PLAN_ISSUE_CODES } from './issues.js';
import type { PortPlanIssue } from './issues.js';
import { deriveNetworkType } from './network-type.js';
import type { NetworkType } from './network-type.js';
import { observePorts, shapeOf } from './port-state.js';
import type { ObservedPort, PortSettings, VlanRef } from './port-state.js';

export interface PortPlanInput {
  /** The device as `GET /devices/{id}` returns it; its ports, metro and network_frozen are read. */
  device: Pick<Device, 'network_frozen' | 'metro' | 'network_ports'>;
  desired: readonly DesiredPort[];
  /** The project's VLANs (any metro): resolves vxlan numbers and tells other metros apart. */
  virtualNetworks: readonly VirtualNetwork[];
  /** The device's metro code when `device.metro` was not included. */
  metro?: string;
  /** Addresses to request on a return to layer 3; default DEFAULT_LAYER3_REQUEST_IPS. */
  requestIps?: readonly PortConvertLayer3RequestIp[];
}

export type PortPlan =
  | {
      kind: 'planned';
      /** Empty when the ports already match. */
      calls: PortCall[];
      from: NetworkType | undefined;
      to: NetworkType | undefined;
    }
  | { kind: 'refused'; issues: PortPlanIssue[] };

export function planPortChanges(input: PortPlanInput): PortPlan {
  const observed = observePorts(input.device.network_ports ?? [], input.virtualNetworks);
  if (observed.issues.length > 0) return { kind: 'refused', issues: observed.issues };
  const ports = observed.ports;
  const desired = resolveDesired(input.desired, ports, {
    virtualNetworks: input.virtualNetworks,
    metro: input.metro ?? input.device.metro?.code,
  });
  if (desired.issues.length > 0) return { kind: 'refused', issues: desired.issues };

  const targets = ports.map((port) => ({ port, want: settingOf(desired.settings, port) }));
  const calls = buildCalls(targets, input.requestIps ?? DEFAULT_LAYER3_REQUEST_IPS);
  if (calls.length > 0 && input.device.network_frozen === true) {
    return {
      kind: 'refused',
      issues: [
        {
          code: PORT_PLAN_ISSUE_CODES.networkFrozen,
          path: 'device.network_frozen',
          message: `the device's network is frozen; ${calls.length} port change(s) are waiting`,
        },
      ],
    };
  }
  return {
    kind: 'planned',
    calls,
    from: deriveNetworkType(ports.map(shapeOf)),
    to: deriveNetworkType(targets.map(({ port, want }) => shapeOf({ ...want, isBond: port.isBond }))),
  };
}

interface Target {
  port: ObservedPort;
  want: PortSettings;
}

function settingOf(settings: ReadonlyMap<string, PortSettings>, port: ObservedPort): PortSettings {
  const setting = settings.get(port.name);
  // resolveDesired fills every observed port; a miss is a bug in this package, not bad input.
  if (setting === undefined) throw new Error(`port plan: no desired settings for port ${port.name}`);
  return setting;
}

function buildCalls(targets: readonly Target[], requestIps: readonly PortConvertLayer3RequestIp[]): PortCall[] {
  const vlanChanges = targets.map(planVlanChanges);
  const structural = [
    ...targets.filter(({ port, want }) => port.isBond && !port.layer2 && want.layer2).map(({ port }) => call(port, { operation: 'convertLayer2' as const })),
    ...bondChanges(targets, 'leave'),
    ...bondChanges(targets, 'join'),
    ...targets
      .filter(({ port, want }) => port.isBond && port.layer2 && !want.layer2)
      .map(({ port }) => call(port, { operation: 'convertLayer3' as const, requestIps })),
  ];

  const clearNativeFirst = vlanChanges.filter((c) => c.clearNativeFirst).map((c) => call(c.port, { operation: 'deleteNativeVlan' as const }));
  const native = vlanChanges.flatMap((c) => c.native);
  if (structural.length === 0) {
    // Nothing in between: each port's removals and additions go in one batch.
    const batches = vlanChanges.flatMap((c) => batchCall(c.port, [...c.unassign, ...c.assign]));
    return [...clearNativeFirst, ...batches, ...native];
  }
  return [
    ...clearNativeFirst,
    ...vlanChanges.flatMap((c) => batchCall(c.port, c.unassign)),
    ...structural,
    ...vlanChanges.flatMap((c) => batchCall(c.port, c.assign)),
    ...native,
  ];
}

interface VlanChanges {
  port: ObservedPort;
  clearNativeFirst: boolean;
  unassign: PlannedVlanAssignment[];
  assign: PlannedVlanAssignment[];
  native: PortCall[];
}

function planVlanChanges({ port, want }: Target): VlanChanges {
  const has = (list: readonly VlanRef[], vlan: VlanRef): boolean => list.some((v) => v.id === vlan.id);
  const toLayer3 = port.isBond && port.layer2 && !want.layer2;
  const unassigned = port.vlans.filter((v) => toLayer3 || !has(want.vlans, v));
  const kept = port.vlans.filter((v) => !has(unassigned, v));
  const assigned = want.vlans.filter((v) => !has(kept, v));

  const clearNativeFirst = port.nativeVlan !== undefined && has(unassigned, port.nativeVlan);
  const nativeAfter = clearNativeFirst ? undefined : port.nativeVlan;
  const native: PortCall[] = [];
  if (want.nativeVlan !== undefined && want.nativeVlan.id !== nativeAfter?.id) {
    native.push(call(port, { operation: 'assignNativeVlan' as const, vlan: want.nativeVlan }));
  } else if (want.nativeVlan === undefined && nativeAfter !== undefined) {
    native.push(call(port, { operation: 'deleteNativeVlan' as const }));
  }
  return {
    port,
    clearNativeFirst,
    unassign: unassigned.map((vlan) => ({ vlan, state: 'unassigned' })),
    assign: assigned.map((vlan) => ({ vlan, state: 'assigned' })),
    native,
  };
}

function batchCall(port: ObservedPort, vlanAssignments: readonly PlannedVlanAssignment[]): PortCall[] {
  return vlanAssignments.length === 0 ? [] : [call(port, { operation: 'createPortVlanAssignmentBatch' as const, vlanAssignments })];
}

/**
 * Ports leaving (or joining) their bond. When every port of a bond moves together the call goes
 * to the bond port with bulk=true (one call, as the API offers); otherwise each port is moved
 * alone with bulk=false, which is how hybrid mode takes eth1 out and puts it back.
 */
function bondChanges(targets: readonly Target[], direction: 'leave' | 'join'): PortCall[] {
  const operation = direction === 'leave' ? ('disbondPort' as const) : ('bondPort' as const);
  const moves = ({ port, want }: Target): boolean => (direction === 'leave' ? port.bonded && !want.bonded : !port.bonded && want.bonded);
  const calls: PortCall[] = [];
  for (const bond of targets.filter((t) => t.port.isBond)) {
    const members = targets.filter((t) => t.port.bondName === bond.port.name);
    if (members.length === 0) {
      if (moves(bond)) calls.push(call(bond.port, { operation, bulk: true }));
      continue;
    }
    const moving = members.filter(moves);
    if (moving.length === 0) continue;
    if (moving.length === members.length) calls.push(call(bond.port, { operation, bulk: true }));
    else calls.push(...moving.map((m) => call(m.port, { operation, bulk: false })));
  }
  return calls;
}

function call<C extends PortCallBody>(port: ObservedPort, body: C): C & { portId: string; portName: string } {
  return { portId: port.id, portName: port.name, ...body };
}

type PortCallBody = DistributiveOmit<PortCall, 'portId' | 'portName'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
