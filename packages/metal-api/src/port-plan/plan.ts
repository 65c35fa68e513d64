// planPortChanges: from the ports a device reports and the ports a user wants, the Metal API calls
// that get there, in an order where every intermediate state is one the API accepts:
//
//   1. clear the native VLAN when that VLAN is about to go
//   2. unassign VLANs (one batch per port); a bond returning to layer 3 loses every VLAN on it and
//      on its ports first ("VLANs must first be unassigned")
//   3. convert bond ports to layer 2
//   4. disbond (the whole bond in one bulk call when every port leaves it)
//   5. bond (likewise in bulk); a bond returning to layer 3 gets all its ports back first
//   6. convert bond ports to layer 3 (with request_ips)
//   7. disbond the ports that end up outside a bond that just returned to layer 3 (hybrid)
//   8. assign VLANs (one batch per port)
//   9. set or clear the native VLAN
//
// This is the Terraform provider's order (remove VLANs, disbond, convert to L2, bond, convert to
// L3, add VLANs, native VLAN) refined with the per-transition calls of
// shared/research/capp-layer2-metal.md (c.1) and packngo's ConvertDevice, because a layer-3 bond
// cannot be unbonded: a bond leaves layer 3 *before* its first port leaves the bond
// (layer3 -> layer2-individual is "convert/layer-2, then disbond?bulk_disable=true"), and returns
// to layer 3 only with every port bonded, eth1 leaving again afterwards (layer2 -> hybrid). The
// Terraform provider never meets these cases because it changes one port at a time.
//
// Pure: no I/O, no clock. Nothing differs -> no calls.

import { DEFAULT_LAYER3_REQUEST_IPS } from '../ports.js';
import type { Device, PortConvertLayer3RequestIp, VirtualNetwork } from '../types.js';
import { resolveDesired } from './desired.js';
import type { DesiredPort } from './desired.js';
import { PORT_PLAN_ISSUE_CODES } from './port-layout.js';
import type { PortPlanIssue } from './port-layout.js';
import { deriveNetworkType } from './port-layout.js';
import type { NetworkType } from './port-layout.js';
import type { RuleScope } from './port-rules.js';
import { observePorts, shapeOf } from './port-state.js';
import type { ObservedPort, PortSettings, VlanRef } from './port-state.js';

// The planner's output: Metal API calls, each named by the spec's operationId, in the order they
// must run. Calls name ports and VLANs by id (what the API takes) and by name/vxlan (what people
// read in logs and events).

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
  /** 'template': also the rules new templates are held to (port-rules.ts); default 'device'. */
  rules?: RuleScope;
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

/**
 * Called with a freshly read device (ports with their VLANs included) whenever its ports may
 * differ from what is wanted. Returns the calls to make, in order, or the issues that make the
 * target impossible; never throws for bad input. The calls are valid against the ports as read:
 * after any of them fails, read the device again and plan again.
 */
export function planPortChanges(input: PortPlanInput): PortPlan {
  const observed = observePorts(input.device.network_ports ?? [], input.virtualNetworks);
  if (observed.issues.length > 0) return { kind: 'refused', issues: observed.issues };
  const ports = observed.ports;
  const desired = resolveDesired(input.desired, ports, {
    virtualNetworks: input.virtualNetworks,
    metro: input.metro ?? input.device.metro?.code,
    ...(input.rules === undefined ? {} : { rules: input.rules }),
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
  const bonds = targets.filter((t) => t.port.isBond);
  const membersOf = (bond: Target): Target[] => targets.filter((t) => t.port.bondName === bond.port.name);
  const returningToLayer3 = new Set(bonds.filter((b) => b.port.layer2 && !b.want.layer2).map((b) => b.port.name));
  const vlanChanges = targets.map((t) =>
    planVlanChanges(t, { unassignAll: returningToLayer3.has(t.port.isBond ? t.port.name : (t.port.bondName ?? '')) }),
  );

  const convertLayer2: PortCall[] = bonds
    .filter((b) => !b.port.layer2 && b.want.layer2)
    .map((b) => call(b.port, { operation: 'convertLayer2' as const }));
  const disbond: PortCall[] = [];
  const bond: PortCall[] = [];
  const convertLayer3: PortCall[] = [];
  const disbondAfterLayer3: PortCall[] = [];
  for (const b of bonds) {
    const members = membersOf(b);
    if (returningToLayer3.has(b.port.name)) {
      bond.push(...moveTogether({ bond: b, members, moving: members.filter((m) => !m.port.bonded), operation: 'bondPort' }));
      convertLayer3.push(call(b.port, { operation: 'convertLayer3' as const, requestIps }));
      disbondAfterLayer3.push(
        ...members.filter((m) => !m.want.bonded).map((m) => call(m.port, { operation: 'disbondPort' as const, bulk: false })),
      );
      continue;
    }
    const leaving = members.length === 0 ? [b].filter(leaves) : members.filter(leaves);
    const joining = members.length === 0 ? [b].filter(joins) : members.filter(joins);
    disbond.push(...moveTogether({ bond: b, members, moving: leaving, operation: 'disbondPort' }));
    bond.push(...moveTogether({ bond: b, members, moving: joining, operation: 'bondPort' }));
  }
  const structural = [...convertLayer2, ...disbond, ...bond, ...convertLayer3, ...disbondAfterLayer3];

  const clearNativeFirst = vlanChanges
    .filter((c) => c.clearNativeFirst)
    .map((c) => call(c.port, { operation: 'deleteNativeVlan' as const }));
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

const leaves = ({ port, want }: Target): boolean => port.bonded && !want.bonded;
const joins = ({ port, want }: Target): boolean => !port.bonded && want.bonded;

interface VlanChanges {
  port: ObservedPort;
  clearNativeFirst: boolean;
  unassign: PlannedVlanAssignment[];
  assign: PlannedVlanAssignment[];
  native: PortCall[];
}

function planVlanChanges({ port, want }: Target, options: { unassignAll: boolean }): VlanChanges {
  const has = (list: readonly VlanRef[], vlan: VlanRef): boolean => list.some((v) => v.id === vlan.id);
  const unassigned = port.vlans.filter((v) => options.unassignAll || !has(want.vlans, v));
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
 * Ports leaving (or joining) a bond. When every port of the bond moves the call goes to the bond
 * port with bulk=true (one call, as the API offers); otherwise each port moves alone with
 * bulk=false, which is how hybrid mode takes eth1 out and puts it back.
 */
function moveTogether(m: {
  bond: Target;
  members: readonly Target[];
  moving: readonly Target[];
  operation: 'bondPort' | 'disbondPort';
}): PortCall[] {
  if (m.moving.length === 0) return [];
  if (m.members.length === 0 || m.moving.length === m.members.length) {
    return [call(m.bond.port, { operation: m.operation, bulk: true })];
  }
  return m.moving.map((t) => call(t.port, { operation: m.operation, bulk: false }));
}

function call<C extends PortCallBody>(port: ObservedPort, body: C): C & { portId: string; portName: string } {
  return { portId: port.id, portName: port.name, ...body };
}

type PortCallBody = DistributiveOmit<PortCall, 'portId' | 'portName'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
