import { MachineNetworkConditionTypes, MachineNetworkReasons, type MachineNetwork } from '@metal-l2/api';
import { getCondition } from '@metal-l2/kube';
import { observePorts, resolveDesired, type DesiredPort, type Device, type VirtualNetwork, type VlanRef } from '@metal-l2/metal-api';
import type { MachineNetworkScope } from './scope.js';

// Zero Metal calls at rest does not mean never looking: each configured machine's device is read
// once per drift period (DESIGN §5), so a change made outside the controller is found. The reads
// are spread: ±10% around the period after each read, and the first after a start at a random
// point between a tenth of a period and 1.1 periods, so a restarted controller does not read
// 1,000 devices at once (nor any in its first tenth of a period).

const keyOf = (scope: Pick<MachineNetworkScope, 'namespace' | 'name'>): string => `${scope.namespace}/${scope.name}`;

/** The ports were configured, or a drift check already reported what it found: only a drift check reads the device again. */
export function portsSettled(mn: MachineNetwork): boolean {
  const c = getCondition(mn.status?.conditions, MachineNetworkConditionTypes.portsConfigured);
  if (c === undefined || mn.status?.pendingBatch !== undefined) return false;
  return c.status === 'True' || c.reason === MachineNetworkReasons.portDrift || c.reason === MachineNetworkReasons.deviceNotFound;
}

/** The device was read now: the next drift check comes one period later, give or take a tenth. */
export function noteDeviceRead(scope: MachineNetworkScope): void {
  const interval = scope.ctx.timings.driftCheckMs;
  scope.ctx.driftChecks.set(keyOf(scope), scope.now.getTime() + interval * (0.9 + 0.2 * Math.random()));
}

/** Whether the drift check of this settled machine is due (the first sight of one schedules it). */
export function driftCheckDue(scope: MachineNetworkScope): boolean {
  const due = scope.ctx.driftChecks.get(keyOf(scope));
  if (due === undefined) {
    const interval = scope.ctx.timings.driftCheckMs;
    scope.ctx.driftChecks.set(keyOf(scope), scope.now.getTime() + interval * (0.1 + Math.random()));
    return false;
  }
  return scope.now.getTime() >= due;
}

/** How long until this settled machine's next drift check, for the requeue. */
export function driftCheckDelayMs(scope: MachineNetworkScope): number | undefined {
  if (!portsSettled(scope.machineNetwork)) return undefined;
  const due = scope.ctx.driftChecks.get(keyOf(scope));
  return due === undefined ? undefined : Math.max(due - scope.ctx.now().getTime(), 100);
}

/** Forget a machine that went away. */
export function forgetDriftCheck(scope: Pick<MachineNetworkScope, 'ctx' | 'namespace' | 'name'>): void {
  scope.ctx.driftChecks.delete(keyOf(scope));
}

export type Drift =
  | { readonly kind: 'none' }
  /** Only VLANs of the template are missing: assigning them again touches nothing else. */
  | { readonly kind: 'repair'; readonly missing: readonly string[] }
  /** Anything else: reported, not undone (it may be deliberate, and undoing a mode change cuts the server off). */
  | { readonly kind: 'report'; readonly differences: readonly string[] };

const vxlanOf = (v: VlanRef): string => (v.vxlan === undefined ? v.id : String(v.vxlan));

/** What differs between the device as read and the template, port by port. */
export function findDrift(input: { device: Device; desired: readonly DesiredPort[]; vlans: readonly VirtualNetwork[] }): Drift {
  const observed = observePorts(input.device.network_ports ?? [], input.vlans).ports;
  const { settings } = resolveDesired(input.desired, observed, { virtualNetworks: input.vlans, metro: input.device.metro?.code });
  const missing: string[] = [];
  const differences: string[] = [];
  for (const port of observed) {
    const want = settings.get(port.name);
    if (want === undefined) continue;
    if (port.isBond && port.layer2 !== want.layer2)
      differences.push(
        `${port.name} is in layer ${port.layer2 ? 2 : 3} (changed outside the controller); the template wants layer ${want.layer2 ? 2 : 3}`,
      );
    if (port.bonded !== want.bonded)
      differences.push(
        `${port.name} is ${port.bonded ? 'bonded' : 'out of its bond'}; the template wants it ${want.bonded ? 'bonded' : 'out of the bond'}`,
      );
    if (port.nativeVlan?.id !== want.nativeVlan?.id)
      differences.push(
        `${port.name} has native VLAN ${port.nativeVlan === undefined ? 'none' : vxlanOf(port.nativeVlan)}; the template wants ${want.nativeVlan === undefined ? 'none' : vxlanOf(want.nativeVlan)}`,
      );
    const have = new Set(port.vlans.map((v) => v.id));
    const wanted = new Set(want.vlans.map((v) => v.id));
    const extra = port.vlans.filter((v) => !wanted.has(v.id));
    if (extra.length > 0) differences.push(`${port.name} has VLAN ${extra.map(vxlanOf).join(', ')}, which the template does not have`);
    for (const v of want.vlans.filter((w) => !have.has(w.id))) missing.push(`${vxlanOf(v)} on ${port.name}`);
  }
  if (differences.length > 0) return { kind: 'report', differences: [...differences, ...missing.map((m) => `VLAN ${m} is missing`)] };
  return missing.length > 0 ? { kind: 'repair', missing } : { kind: 'none' };
}
