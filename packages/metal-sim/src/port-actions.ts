// What the port endpoints do: VLAN (un)assignment, native VLAN, bond/disbond, layer-2/layer-3
// conversion and VLAN assignment batches. Each action checks every rule first and only then
// changes state, so a refused call leaves the port exactly as it was.

import { enforce, unprocessable } from './errors.js';
import type { BatchItem, Device, Port, VirtualNetwork, VlanAssignmentBatch } from './models.js';
import { checkNoBatchInProgress } from './rules/batch-in-progress.js';
import { checkBond, checkDisbond, type MemberView } from './rules/bonding.js';
import { checkDeviceActive } from './rules/device-active.js';
import { checkNativeVlanAssigned, checkNativeVlanPortMode } from './rules/native-vlan.js';
import { checkNetworkNotFrozen } from './rules/network-frozen.js';
import { checkConvertLayer2, checkConvertLayer3 } from './rules/port-conversion.js';
import { checkPortCarriesVlans } from './rules/port-vlan-capable.js';
import type { RuleViolation } from './rules/rule.js';
import { checkAssignmentChange } from './rules/vlan-assignment-state.js';
import { checkVlanInDeviceMetro } from './rules/vlan-metro.js';
import type { AddressRequest, SimulatorStore } from './store.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A `vnid` as the API takes it: "the UUID of the Virtual Network record, or the VLAN value itself".
 * A vxlan is looked up in the device's project and metro; one that exists only in another metro is
 * the metro-local rule's refusal, not "not found".
 */
export function resolveVlanRef(store: SimulatorStore, device: Device, ref: string): VirtualNetwork {
  let vlan: VirtualNetwork | undefined;
  if (UUID.test(ref)) {
    vlan = store.vlans.get(ref);
    if (vlan === undefined || vlan.projectId !== device.projectId) throw unprocessable(`virtual network ${ref} not found`);
  } else if (/^\d+$/.test(ref)) {
    const vxlan = Number(ref);
    const candidates = [...store.vlans.values()].filter((v) => v.projectId === device.projectId && v.vxlan === vxlan);
    vlan = candidates.find((v) => v.metroCode === device.metroCode) ?? candidates[0];
    if (vlan === undefined) throw unprocessable(`virtual network ${ref} not found in this project`);
  } else {
    throw unprocessable(`vnid ${ref} is neither a virtual network UUID nor a VLAN number`);
  }
  enforce(checkVlanInDeviceMetro({ vxlan: vlan.vxlan, vlanMetro: vlan.metroCode, deviceMetro: device.metroCode }));
  return vlan;
}

/** Rules every port change shares: the device is active and its network not frozen. */
export function enforcePortChangeAllowed(device: Device): void {
  enforce(checkNetworkNotFrozen({ hostname: device.hostname, networkFrozen: device.networkFrozen }));
  enforce(checkDeviceActive({ hostname: device.hostname, state: device.state }));
}

function carriesVlans(store: SimulatorStore, port: Port): RuleViolation | null {
  return port.kind === 'physical'
    ? checkPortCarriesVlans({ kind: 'physical', name: port.name, bonded: port.bonded })
    : checkPortCarriesVlans({ kind: 'bond', name: port.name, activeMembers: store.bondMembers(port).filter((m) => m.bonded).length });
}

function isAssigned(port: Port, vlanId: string): boolean {
  return port.vlans.some((a) => a.vlanId === vlanId);
}

export function assignVlan(store: SimulatorStore, port: Port, vlan: VirtualNetwork): void {
  enforcePortChangeAllowed(store.deviceOfPort(port));
  enforce(carriesVlans(store, port));
  enforce(checkAssignmentChange({ port: port.name, vxlan: vlan.vxlan, want: 'assigned', isAssigned: isAssigned(port, vlan.id) }));
  port.vlans.push({ id: store.ids.uuid(), vlanId: vlan.id, createdAt: store.nowIso() });
  store.portsChanged([port]);
}

/** Removing the native VLAN also clears the port's native setting (it cannot point at nothing). */
export function unassignVlan(store: SimulatorStore, port: Port, vlan: VirtualNetwork): void {
  enforcePortChangeAllowed(store.deviceOfPort(port));
  enforce(checkAssignmentChange({ port: port.name, vxlan: vlan.vxlan, want: 'unassigned', isAssigned: isAssigned(port, vlan.id) }));
  port.vlans = port.vlans.filter((a) => a.vlanId !== vlan.id);
  if (port.nativeVlanId === vlan.id) port.nativeVlanId = undefined;
  store.portsChanged([port]);
}

export function setNativeVlan(store: SimulatorStore, port: Port, vlan: VirtualNetwork): void {
  enforcePortChangeAllowed(store.deviceOfPort(port));
  enforce(checkNativeVlanPortMode({ port: port.name, kind: port.kind, layer2: store.bondOf(port).layer2 }));
  const assigned = port.vlans.map((a) => store.vlanOf(a.vlanId).vxlan);
  enforce(checkNativeVlanAssigned({ port: port.name, vxlan: vlan.vxlan, assignedVxlans: assigned }));
  port.nativeVlanId = vlan.id;
  store.portsChanged([port]);
}

/** Clearing a native VLAN that is not set is a no-op, not an error. */
export function clearNativeVlan(store: SimulatorStore, port: Port): void {
  enforcePortChangeAllowed(store.deviceOfPort(port));
  if (port.nativeVlanId === undefined) return;
  port.nativeVlanId = undefined;
  store.portsChanged([port]);
}

function memberView(store: SimulatorStore, bond: Port, m: Port): MemberView {
  return { name: m.name, bonded: m.bonded, isPrimary: store.bondMembers(bond)[0]?.id === m.id, vlanCount: m.vlans.length };
}

/** `bulk` (or a bond port) acts on every member of the bond; otherwise on the one physical port. */
function targetsOf(store: SimulatorStore, port: Port, bulk: boolean): Port[] {
  return port.kind === 'bond' || bulk ? store.bondMembers(store.bondOf(port)) : [port];
}

export function bondPort(store: SimulatorStore, port: Port, bulk: boolean): void {
  enforcePortChangeAllowed(store.deviceOfPort(port));
  const bond = store.bondOf(port);
  const targets = targetsOf(store, port, bulk);
  enforce(checkBond({ port: port.name, targets: targets.map((t) => memberView(store, bond, t)) }));
  for (const t of targets) t.bonded = true;
  store.portsChanged([bond, ...targets]);
}

export function disbondPort(store: SimulatorStore, port: Port, bulk: boolean): void {
  enforcePortChangeAllowed(store.deviceOfPort(port));
  const bond = store.bondOf(port);
  const targets = targetsOf(store, port, bulk);
  const remaining = store.bondMembers(bond).filter((m) => m.bonded && !targets.includes(m)).length;
  enforce(
    checkDisbond({
      port: port.name,
      bondName: bond.name,
      bondLayer2: bond.layer2,
      bondVlanCount: bond.vlans.length,
      targets: targets.map((t) => memberView(store, bond, t)),
      remainingBonded: remaining,
    }),
  );
  for (const t of targets) t.bonded = false;
  store.portsChanged([bond, ...targets]);
}

/** Whether this bond carries the device's management addresses (bond0 does; bond1 never has any). */
function carriesAddresses(store: SimulatorStore, bond: Port): boolean {
  return store.addressBond(store.deviceOfPort(bond)).id === bond.id;
}

/** "IP assignments of the port will be removed"; an optional vnid is assigned in the same call. */
export function convertLayer2(store: SimulatorStore, port: Port, vnid: string | undefined): void {
  const device = store.deviceOfPort(port);
  enforcePortChangeAllowed(device);
  enforce(checkConvertLayer2({ name: port.name, kind: port.kind, layer2: port.layer2 }));
  const vlan = vnid === undefined ? undefined : resolveVlanRef(store, device, vnid);
  if (vlan !== undefined) {
    enforce(checkAssignmentChange({ port: port.name, vxlan: vlan.vxlan, want: 'assigned', isAssigned: isAssigned(port, vlan.id) }));
  }
  port.layer2 = true;
  if (carriesAddresses(store, port)) device.ipAssignments = [];
  if (vlan !== undefined) port.vlans.push({ id: store.ids.uuid(), vlanId: vlan.id, createdAt: store.nowIso() });
  store.portsChanged([port]);
}

/** New addresses are allocated; the old ones are gone for good, as the docs warn. */
export function convertLayer3(store: SimulatorStore, port: Port, requestIps: readonly AddressRequest[]): void {
  const device = store.deviceOfPort(port);
  enforcePortChangeAllowed(device);
  const members = port.kind === 'bond' ? store.bondMembers(port) : [];
  enforce(
    checkConvertLayer3({
      name: port.name,
      kind: port.kind,
      layer2: port.layer2,
      unbondedMembers: members.filter((m) => !m.bonded).map((m) => m.name),
      assignedVxlans: [port, ...members].flatMap((p) => p.vlans.map((a) => store.vlanOf(a.vlanId).vxlan)),
    }),
  );
  if (carriesAddresses(store, port)) device.ipAssignments = store.allocateAddresses(requestIps);
  port.layer2 = false;
  port.nativeVlanId = undefined;
  store.portsChanged([port]);
}

// ------------------------------------------------------------------ batches

export interface BatchItemInput {
  readonly vlan: string;
  readonly state: 'assigned' | 'unassigned';
  readonly native: boolean;
}

/**
 * Checks a batch's items against the port as it would be after the earlier items; returns the
 * messages of every item that cannot apply. Used when the batch is created and again when it runs.
 */
function batchProblems(store: SimulatorStore, port: Port, items: readonly BatchItem[]): string[] {
  const problems: string[] = [];
  const assigned = new Set(port.vlans.map((a) => a.vlanId));
  for (const item of items) {
    const v = checkAssignmentChange({ port: port.name, vxlan: item.vxlan, want: item.state, isAssigned: assigned.has(item.vlanId) });
    if (v !== null) problems.push(v.message);
    if (item.state === 'assigned') assigned.add(item.vlanId);
    else assigned.delete(item.vlanId);
  }
  if (items.some((i) => i.state === 'assigned')) {
    const v = carriesVlans(store, port);
    if (v !== null) problems.push(v.message);
  }
  if (items.some((i) => i.native)) {
    const v = checkNativeVlanPortMode({ port: port.name, kind: port.kind, layer2: store.bondOf(port).layer2 });
    if (v !== null) problems.push(v.message);
  }
  return problems;
}

/**
 * Creates a batch (queued); it moves to in_progress and then completed or failed as the clock
 * advances. Its assignments apply all at once when it completes; if the port changed meanwhile so
 * that one no longer applies, none apply and the batch fails with the reasons. `injected` is asked
 * once the batch passed every check: a failure it returns (a batch-failed fault rule) ends the
 * batch `failed` with that message where it would have completed.
 */
export function createBatch(
  store: SimulatorStore,
  port: Port,
  options: { readonly inputs: readonly BatchItemInput[]; readonly injected?: () => { readonly message: string } | undefined },
): VlanAssignmentBatch {
  const device = store.deviceOfPort(port);
  enforcePortChangeAllowed(device);
  enforce(checkNoBatchInProgress({ port: port.name, openBatchIds: store.openBatches({ portId: port.id }).map((b) => b.id) }));
  const { inputs } = options;
  if (inputs.length === 0) throw unprocessable('vlan_assignments must not be empty');
  const items: BatchItem[] = inputs.map((i) => {
    const vlan = resolveVlanRef(store, device, i.vlan);
    if (i.native && i.state !== 'assigned') throw unprocessable(`virtual network ${vlan.vxlan}: only an assigned VLAN can be native`);
    return { id: store.ids.uuid(), vlanId: vlan.id, vxlan: vlan.vxlan, state: i.state, native: i.native };
  });
  const seen = new Set<string>();
  for (const i of items) {
    if (seen.has(i.vlanId)) throw unprocessable(`virtual network ${i.vxlan} appears more than once in the batch`);
    seen.add(i.vlanId);
  }
  if (items.filter((i) => i.native).length > 1) throw unprocessable('at most one VLAN of a batch can be native');
  const problems = batchProblems(store, port, items);
  if (problems.length > 0) throw unprocessable(problems.join('; '));

  const failure = options.injected?.();
  const now = store.nowIso();
  const batch: VlanAssignmentBatch = {
    id: store.ids.uuid(),
    portId: port.id,
    projectId: device.projectId,
    items,
    createdAt: now,
    state: 'queued',
    errorMessages: [],
    updatedAt: now,
  };
  store.addBatch(batch);
  store.schedule(store.delays.batchQueuedMs, () => {
    if (batch.state !== 'queued') return;
    store.setBatchState(batch, 'in_progress');
    store.schedule(store.delays.batchInProgressMs, () => {
      if (batch.state !== 'in_progress') return;
      if (failure === undefined) runBatch(store, batch);
      else store.setBatchState(batch, 'failed', [failure.message]);
    });
  });
  return batch;
}

function runBatch(store: SimulatorStore, batch: VlanAssignmentBatch): void {
  const port = store.ports.get(batch.portId);
  const device = port === undefined ? undefined : store.devices.get(port.deviceId);
  if (port === undefined || device === undefined) {
    store.setBatchState(batch, 'failed', ['the port no longer exists']);
    return;
  }
  const problems = [
    ...(device.networkFrozen ? [`the network of device ${device.hostname} is frozen`] : []),
    ...batchProblems(store, port, batch.items),
  ];
  if (problems.length > 0) {
    store.setBatchState(batch, 'failed', problems);
    return;
  }
  for (const item of batch.items) {
    if (item.state === 'assigned') {
      port.vlans.push({ id: store.ids.uuid(), vlanId: item.vlanId, createdAt: store.nowIso() });
      if (item.native) port.nativeVlanId = item.vlanId;
    } else {
      port.vlans = port.vlans.filter((a) => a.vlanId !== item.vlanId);
      if (port.nativeVlanId === item.vlanId) port.nativeVlanId = undefined;
    }
  }
  store.portsChanged([port]);
  store.setBatchState(batch, 'completed');
}
