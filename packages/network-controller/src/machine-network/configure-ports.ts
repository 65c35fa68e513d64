import {
  MachineNetworkConditionTypes,
  MachineNetworkEventReasons,
  MachineNetworkReasons,
  NetworkAnnotations,
  deviceIdOf,
  type MachineNetwork,
} from '@metal-l2/api';
import { getCondition, type Phase, proceed, type StepOutcome, waitFor } from '@metal-l2/kube';
import {
  observePorts,
  resolveDesired,
  type Device,
  type Event as MetalEvent,
  type DesiredPort,
  type MetalClient,
  type VirtualNetwork,
  type VlanRef,
} from '@metal-l2/metal-api';
import { UserStateCode } from '@metal-l2/machine-config';
import { machineMetal, readDevice, type MetalAccess } from '../metal/machine-metal.js';
import { desiredNetworkMode, desiredPorts, removesLayer3 } from '../resolved-ports.js';
import {
  afterMetalError,
  afterMetalFailure,
  DEVICE_INCLUDES,
  drivePorts,
  metalSucceeded,
  pollPendingBatch,
  portRecords,
  projectedPorts,
} from './port-driver.js';
import { conditionIs, type MachineNetworkScope, markCondition } from './scope.js';

function notConfigured(scope: MachineNetworkScope, reason: string, message: string): void {
  markCondition(scope.machineNetwork, { type: MachineNetworkConditionTypes.portsConfigured, status: 'False', reason, message }, scope.now);
}

function configured(scope: MachineNetworkScope, message: string): void {
  markCondition(
    scope.machineNetwork,
    { type: MachineNetworkConditionTypes.portsConfigured, status: 'True', reason: MachineNetworkReasons.portsConfigured, message },
    scope.now,
  );
}

/** The boot script's latest user-state event (its codes are ours: 1001 captured, 1002 configured, 1099 failed). */
async function bootScriptEvent(
  metal: MetalClient,
  id: string,
  signal: AbortSignal,
): Promise<{ state: string; code: number; message: string } | undefined> {
  const ours = new Set<number>(Object.values(UserStateCode));
  for await (const event of metal.devices.events(id, { signal })) {
    const parsed = parseUserState(event);
    if (parsed !== undefined && ours.has(parsed.code)) return parsed; // newest first
  }
  return undefined;
}

function parseUserState(event: MetalEvent): { state: string; code: number; message: string } | undefined {
  if (event.type !== 'user.state') return undefined;
  const match = /^(\d{4}):\s?(.*)$/s.exec(event.interpolated ?? '');
  if (match === null) return undefined;
  return { state: event.state ?? '', code: Number(match[1]), message: match[2] ?? event.body ?? '' };
}

function metalError(scope: MachineNetworkScope, what: string, err: unknown): StepOutcome {
  const message = `${what}: ${err instanceof Error ? err.message : String(err)}`;
  notConfigured(scope, MachineNetworkReasons.metalAPIError, message);
  scope.ctx.events.event(scope.machineNetwork, { type: 'Warning', reason: MachineNetworkEventReasons.metalAPIError, message });
  return afterMetalError(scope, what, err);
}

/** The device to configure, and whether this run is a drift check of it (configured before). */
interface Target {
  readonly deviceId: string;
  readonly checking: boolean;
}

/** What a read of the device gave: the device as it is, the plan for it and the VLANs it names. */
interface DeviceRead {
  readonly device: Device;
  readonly desired: readonly DesiredPort[];
  readonly vlans: readonly VirtualNetwork[];
}

/**
 * Postcondition: the device's ports are in the template's mode with its VLANs assigned, and
 * status.ports shows them as read. Costs, for a hybrid-bonded machine: one device read, one VLAN
 * batch, one poll; once configured, one device read per drift period (drift-check.ts) and nothing
 * else (resyncs and restarts make no call).
 * Modes that take layer 3 away wait for the boot script's "metadata captured" event first.
 */
export async function configurePorts(scope: MachineNetworkScope): Promise<StepOutcome> {
  const target = deviceToConfigure(scope);
  if ('stop' in target) return target.stop;
  const { deviceId, checking } = target.next;
  const access = await machineMetal(scope.ctx, {
    machineNetwork: scope.machineNetwork,
    packetMachine: scope.packetMachine,
    clusterName: scope.clusterName,
    rctx: scope.rctx,
  });
  if (access.kind === 'missing') {
    notConfigured(scope, access.reason, access.message);
    return waitFor(scope.ctx.timings.metalRetryMs * 10);
  }
  const batch = await awaitPendingBatch(scope, access.metal, deviceId);
  if (batch !== undefined) return batch;
  const bootScript = await awaitBootScript(scope, access.metal, deviceId);
  if (bootScript !== undefined) return bootScript;
  const read = await readDeviceAndVlans(scope, access, target.next);
  if ('stop' in read) return read.stop;
  if (checking) {
    const judged = judgeDrift(scope, findDrift(read.next));
    if (judged !== undefined) return judged;
  }
  return applyPortPlan(scope, { metal: access.metal, deviceId }, read.next);
}

/**
 * Which device to configure, and whether this is a drift check of a configured one; stops while
 * CAPP reports a failure, has no device yet or is still provisioning it, and between drift checks.
 */
function deviceToConfigure(scope: MachineNetworkScope): Phase<Target> {
  const { machineNetwork: mn, packetMachine: pm } = scope;
  const status = (mn.status ??= {});
  const deviceId = pm === undefined ? undefined : deviceIdOf(pm);
  let checking = false;
  if (pm?.status?.failureReason !== undefined) {
    notConfigured(
      scope,
      MachineNetworkReasons.deviceFailed,
      `CAPP reports ${pm.status.failureReason}: ${pm.status.failureMessage ?? 'no message'}`,
    );
    return { stop: waitFor() };
  }
  if (deviceId === undefined) {
    notConfigured(
      scope,
      MachineNetworkReasons.waitingForDevice,
      'waiting for the device: CAPP creates it once the PacketMachine is unpaused',
    );
    return { stop: waitFor() };
  }
  if (status.deviceID !== deviceId) {
    // A new device (or the first): whatever was observed or pending belongs to another one.
    status.deviceID = deviceId;
    delete status.ports;
    delete status.pendingBatch;
    delete status.bootScript;
    delete status.bootScriptWaitingSince;
  } else if (portsSettled(mn)) {
    // Configured: the device is read again only when its drift check is due.
    if (!driftCheckDue(scope)) return { stop: settled(scope) };
    checking = true;
  }
  // A moved or restored machine whose record says this device was configured is read at once:
  // its PacketMachine's status (ready) did not travel either.
  const recorded = mn.metadata.annotations?.[NetworkAnnotations.portsConfigured] === deviceId;
  if (pm?.status?.ready !== true && !recorded) {
    notConfigured(scope, MachineNetworkReasons.waitingForDevice, `device ${deviceId} is being provisioned`);
    return { stop: waitFor() };
  }
  return { next: { deviceId, checking } };
}

/** A VLAN batch sent by an earlier reconcile is polled to its end before anything else is read. */
async function awaitPendingBatch(scope: MachineNetworkScope, metal: MetalClient, deviceId: string): Promise<StepOutcome | undefined> {
  let polled;
  try {
    polled = await pollPendingBatch(scope, metal);
  } catch (err: unknown) {
    return metalError(scope, `poll VLAN batch of device ${deviceId}`, err);
  }
  switch (polled.kind) {
    case 'pending':
      notConfigured(scope, MachineNetworkReasons.configuringPorts, 'waiting for a VLAN assignment batch to complete');
      return waitFor(polled.afterMs);
    case 'failed':
      notConfigured(scope, MachineNetworkReasons.metalAPIError, polled.message);
      scope.ctx.events.event(scope.machineNetwork, {
        type: 'Warning',
        reason: MachineNetworkEventReasons.metalAPIError,
        message: polled.message,
      });
      return afterMetalFailure(scope);
    case 'completed':
      return polled.final ? done(scope) : undefined;
    case 'none':
      return undefined;
  }
}

/**
 * Before layer 3 goes the boot script must have the metadata; while waiting for it only the
 * events are read, not the device.
 */
async function awaitBootScript(scope: MachineNetworkScope, metal: MetalClient, deviceId: string): Promise<StepOutcome | undefined> {
  const { ctx, machineNetwork: mn } = scope;
  const status = (mn.status ??= {});
  if (
    !removesLayer3(mn.spec) ||
    status.bootScript?.code === UserStateCode.MetadataCaptured ||
    status.bootScript?.code === UserStateCode.Configured
  )
    return undefined;
  let event;
  try {
    event = await bootScriptEvent(metal, deviceId, scope.rctx.signal);
  } catch (err: unknown) {
    return metalError(scope, `read the events of device ${deviceId}`, err);
  }
  if (event !== undefined) {
    status.bootScript = event;
    delete status.bootScriptWaitingSince;
  }
  if (event?.code === UserStateCode.Failed) {
    notConfigured(scope, MachineNetworkReasons.bootScriptFailed, `the boot script failed: ${event.message}`);
    return waitFor(ctx.timings.devicePollMs);
  }
  if (event === undefined) return waitForBootScript(scope);
  return undefined;
}

/** Reads the device and the VLANs its plan names; status.ports is set from this read, never from the record. */
async function readDeviceAndVlans(
  scope: MachineNetworkScope,
  access: MetalAccess,
  { deviceId, checking }: Target,
): Promise<Phase<DeviceRead>> {
  const { ctx, machineNetwork: mn } = scope;
  const signal = scope.rctx.signal;
  let device: Device | undefined;
  try {
    device = await readDevice(access.metal, deviceId, { include: DEVICE_INCLUDES, signal });
  } catch (err: unknown) {
    return { stop: metalError(scope, `read device ${deviceId}`, err) };
  }
  if (device === undefined) {
    if (checking) return { stop: deviceGone(scope, deviceId) };
    notConfigured(scope, MachineNetworkReasons.waitingForDevice, `device ${deviceId} not found in the Metal API`);
    return { stop: waitFor(ctx.timings.devicePollMs) };
  }
  if (device.state !== 'active') {
    notConfigured(scope, MachineNetworkReasons.waitingForDevice, `device ${deviceId} is ${device.state ?? 'not active'}`);
    return { stop: waitFor(ctx.timings.devicePollMs) };
  }
  const desired = desiredPorts(mn.spec);
  const metro = device.metro?.code ?? access.metro;
  if (metro === undefined) return { stop: metalError(scope, `device ${deviceId}`, new Error('the device reports no metro')) };
  let vlans;
  try {
    vlans = await ctx.vlans.list(access.metal, {
      credentials: access.credentials,
      projectId: access.projectId,
      metro,
      wanted: desired.flatMap((p) => p.vlans ?? []),
      signal,
    });
  } catch (err: unknown) {
    return { stop: metalError(scope, `list the VLANs of project ${access.projectId} in ${metro}`, err) };
  }
  (mn.status ??= {}).ports = portRecords(device, vlans);
  noteDeviceRead(scope);
  return { next: { device, desired, vlans } };
}

/** Sends the port plan's calls in order (none when the ports already match) and says what the status shows next. */
async function applyPortPlan(
  scope: MachineNetworkScope,
  { metal, deviceId }: { readonly metal: MetalClient; readonly deviceId: string },
  read: DeviceRead,
): Promise<StepOutcome> {
  const { ctx, machineNetwork: mn } = scope;
  const status = (mn.status ??= {});
  let driven;
  try {
    driven = await drivePorts(scope, { metal, ...read });
  } catch (err: unknown) {
    return metalError(scope, `configure the ports of device ${deviceId}`, err);
  }
  switch (driven.kind) {
    case 'refused':
      notConfigured(scope, MachineNetworkReasons.invalidPortPlan, driven.message);
      ctx.events.event(mn, { type: 'Warning', reason: MachineNetworkEventReasons.invalidPortPlan, message: driven.message });
      return waitFor(ctx.timings.metalRetryMs * 10);
    case 'batch-started':
      status.ports = projectedPorts(read);
      notConfigured(
        scope,
        MachineNetworkReasons.configuringPorts,
        `waiting for the VLAN batch on ${status.pendingBatch?.port ?? 'a port'}`,
      );
      return waitFor(ctx.timings.batchPollMs);
    case 'converged':
      if (driven.callCount > 0) status.ports = projectedPorts(read);
      return done(scope);
  }
}

/** A settled machine between drift checks: nothing is read; a reported drift stays reported. */
function settled(scope: MachineNetworkScope): StepOutcome {
  if (conditionIs(scope.machineNetwork, MachineNetworkConditionTypes.portsConfigured, 'True')) return proceed;
  return waitFor(driftCheckDelayMs(scope));
}

/** The configured device is gone from the Metal API while the machine lives: said, and looked at again next period. */
function deviceGone(scope: MachineNetworkScope, deviceId: string): StepOutcome {
  noteDeviceRead(scope);
  const message = `device ${deviceId} of this machine is no longer in the Metal API (deleted outside Cluster API?)`;
  if (!hasReason(scope.machineNetwork, MachineNetworkReasons.deviceNotFound))
    scope.ctx.events.event(scope.machineNetwork, { type: 'Warning', reason: MachineNetworkEventReasons.deviceNotFound, message });
  notConfigured(scope, MachineNetworkReasons.deviceNotFound, message);
  return waitFor(driftCheckDelayMs(scope));
}

/**
 * A drift check's verdict: in sync is PortsConfigured (again); VLANs of the template gone missing
 * are assigned again (undefined: the caller drives the ports), with a Warning Event; any other
 * difference is reported, not undone, until the device matches again.
 */
function judgeDrift(scope: MachineNetworkScope, drift: Drift): StepOutcome | undefined {
  const mn = scope.machineNetwork;
  switch (drift.kind) {
    case 'none':
      return done(scope);
    case 'repair':
      scope.ctx.events.event(mn, {
        type: 'Warning',
        reason: MachineNetworkEventReasons.portDriftRepaired,
        message: `VLAN ${drift.missing.join(', ')} was unassigned outside the controller; assigning it again`,
      });
      return undefined;
    case 'report': {
      const message = `the ports were changed outside the controller and are left as they are: ${drift.differences.join('; ')}`;
      const previous = getCondition(mn.status?.conditions, MachineNetworkConditionTypes.portsConfigured);
      if (previous?.reason !== MachineNetworkReasons.portDrift || previous.message !== message)
        scope.ctx.events.event(mn, { type: 'Warning', reason: MachineNetworkEventReasons.portDrift, message });
      notConfigured(scope, MachineNetworkReasons.portDrift, message);
      return waitFor(driftCheckDelayMs(scope));
    }
  }
}

function hasReason(mn: MachineNetwork, reason: string): boolean {
  return getCondition(mn.status?.conditions, MachineNetworkConditionTypes.portsConfigured)?.reason === reason;
}

/**
 * No report from the boot script yet. Layer 3 stays (it is what the script needs to read the
 * metadata); past the budget the wait is reported, with what to check, and goes on: a late report
 * still lets the machine proceed.
 */
function waitForBootScript(scope: MachineNetworkScope): StepOutcome {
  const { ctx, machineNetwork: mn } = scope;
  const status = (mn.status ??= {});
  status.bootScriptWaitingSince ??= scope.now.toISOString();
  const waitedMs = scope.now.getTime() - Date.parse(status.bootScriptWaitingSince);
  const budgetMs = ctx.timings.bootScriptTimeoutMs;
  if (!(waitedMs >= budgetMs)) {
    notConfigured(
      scope,
      MachineNetworkReasons.waitingForBootScript,
      'waiting for the boot script to save the metadata before layer 3 goes away',
    );
    return waitFor(Math.min(ctx.timings.devicePollMs, Math.max(budgetMs - waitedMs, 1)));
  }
  const message =
    `no "metadata captured" (user-state 1001) from the boot script after ${Math.round(waitedMs / 1000)} s (budget ${Math.round(budgetMs / 1000)} s); ` +
    'layer 3 stays until it reports. Check that the server booted (Metal SOS console), that its user data ran ' +
    `(/var/log/cloud-init-output.log; on Flatcar, journalctl -u metal-l2.service), that the image has curl or wget, ` +
    `and that it reaches the metadata service ${ctx.metadataUrl}`;
  const previous = mn.status?.conditions?.find((c) => c.type === MachineNetworkConditionTypes.portsConfigured);
  if (previous?.reason !== MachineNetworkReasons.bootScriptTimeout)
    ctx.events.event(mn, { type: 'Warning', reason: MachineNetworkEventReasons.bootScriptTimeout, message });
  notConfigured(scope, MachineNetworkReasons.bootScriptTimeout, message);
  return waitFor(ctx.timings.devicePollMs);
}

function done(scope: MachineNetworkScope): StepOutcome {
  const mn = scope.machineNetwork;
  metalSucceeded(scope);
  const mode = desiredNetworkMode(mn.spec);
  if (!conditionIs(mn, MachineNetworkConditionTypes.portsConfigured, 'True')) {
    scope.ctx.events.event(mn, {
      type: 'Normal',
      reason: MachineNetworkEventReasons.portsConfigured,
      message: `ports configured: ${mode ?? 'unknown mode'}`,
    });
  }
  configured(scope, `ports in ${mode ?? 'the requested'} mode`);
  return proceed;
}

// ---- Drift: when a configured device is read again, and what counts as drift ----

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
