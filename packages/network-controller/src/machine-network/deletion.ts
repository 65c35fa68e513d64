import {
  MachineNetworkConditionTypes,
  MachineNetworkEventReasons,
  MachineNetworkReasons,
  NetworkFinalizers,
  MachineNetworkType,
  type AssignedVlan,
  type IPAddressClaim,
} from '@metal-l2/api';
import {
  isMetalGone,
  isMetalHttpError,
  metalErrorIn,
  observePorts,
  type DesiredPort,
  type Device,
  type MetalClient,
  type ObservedPort,
} from '@metal-l2/metal-api';
import { isNotFound } from '@metal-l2/kube';
import { IndexNames } from '../context.js';
import { machineMetal, type MetalAccess } from '../metal/machine-metal.js';
import { DEVICE_INCLUDES, drivePorts, pollPendingBatch, type BatchPoll, type DriveResult } from './port-driver.js';
import { afterMetalError } from './metal-retry.js';
import { describe, failed, proceed, waitFor, type MachineNetworkScope, type StepOutcome } from './scope.js';
import { markCondition } from './status.js';

function deleting(scope: MachineNetworkScope, message: string): void {
  markCondition(
    scope.machineNetwork,
    { type: MachineNetworkConditionTypes.ready, status: 'False', reason: MachineNetworkReasons.deleting, message },
    scope.now,
  );
}

async function readDevice(metal: MetalClient, id: string, signal: AbortSignal): Promise<Device | undefined> {
  try {
    const device = await metal.devices.get(id, { include: DEVICE_INCLUDES, signal });
    // A device on its way out takes its VLAN assignments with it.
    return device.state === 'deprovisioning' || device.state === 'deleted' ? undefined : device;
  } catch (err: unknown) {
    if (isMetalGone(err)) return undefined;
    throw err;
  }
}

/** The pending batch, looked at once; a batch Metal no longer knows (its device is gone) is forgotten. */
async function pollBatchOfDeletion(scope: MachineNetworkScope, metal: MetalClient): Promise<BatchPoll> {
  const status = (scope.machineNetwork.status ??= {});
  try {
    return await pollPendingBatch(scope, metal);
  } catch (err: unknown) {
    if (!isMetalGone(err) || status.pendingBatch === undefined) throw err;
    scope.ctx.batchChecks.delete(status.pendingBatch.batchID);
    delete status.pendingBatch;
    return { kind: 'none' };
  }
}

/** Metal answered that the token may not do this: no retry will change that, only a user. */
function tokenRefused(err: unknown): boolean {
  const metal = metalErrorIn(err);
  return isMetalHttpError(metal) && (metal.status === 401 || metal.status === 403);
}

/**
 * What this controller assigned cannot be checked (no credentials, no PacketCluster, a token
 * Metal refuses). Deletion always ends (DESIGN §3.3 step 7), and it unassigns only when the
 * MachineNetwork's own PacketMachine is deleted or gone (one deleted while its machine lives keeps
 * the network: keep-network.ts): CAPP then deletes the device, which takes its VLAN assignments
 * with it. So deletion goes on at once, and a Warning Event names what was not checked.
 */
function cannotCheck(scope: MachineNetworkScope, why: string): StepOutcome {
  const { ctx, machineNetwork: mn } = scope;
  const status = (mn.status ??= {});
  const what = `VLANs ${(status.assignedVlans ?? []).map((v) => `${v.port}:${v.vxlan}`).join(', ')} of device ${status.deviceID ?? 'unknown'}`;
  ctx.events.event(mn, {
    type: 'Warning',
    reason: MachineNetworkEventReasons.vlansNotChecked,
    message: `could not check ${what} (${why}); the PacketMachine is deleted, and its device with it: the MachineNetwork is deleted without unassigning them`,
  });
  scope.rctx.logger.info('deletion goes on without unassigning VLANs', { why });
  status.assignedVlans = [];
  delete status.pendingBatch;
  return proceed;
}

/**
 * Postcondition: no VLAN this controller assigned is still on the device (VLANs others assigned
 * stay; the port mode stays: the device is going away or being reused by someone who decides).
 * A device that is gone or deprovisioning has nothing left to unassign; one that cannot be
 * checked ends the step too (cannotCheck), so deletion never waits forever.
 */
export async function unassignVlans(scope: MachineNetworkScope): Promise<StepOutcome> {
  const { ctx, machineNetwork: mn } = scope;
  const status = (mn.status ??= {});
  const ours = status.assignedVlans ?? [];
  const deviceId = status.deviceID;
  if (ours.length === 0 || deviceId === undefined) return proceed;
  const access = await machineMetal(ctx, {
    machineNetwork: mn,
    packetMachine: scope.packetMachine,
    clusterName: scope.clusterName,
    rctx: scope.rctx,
  });
  if (access.kind === 'missing') return cannotCheck(scope, access.message);
  try {
    return await unassignOnDevice(scope, access, { deviceId, ours });
  } catch (err: unknown) {
    if (tokenRefused(err)) return cannotCheck(scope, `Metal refused the token: ${err instanceof Error ? err.message : String(err)}`);
    const message = `unassign VLANs of device ${deviceId}: ${err instanceof Error ? err.message : String(err)}`;
    deleting(scope, message);
    ctx.events.event(mn, { type: 'Warning', reason: MachineNetworkEventReasons.metalAPIError, message });
    return afterMetalError(scope, `unassign VLANs of device ${deviceId}`, err);
  }
}

/** What a deletion unassigns: our VLANs as recorded when the step began, and their device. */
interface Unassigning {
  readonly deviceId: string;
  readonly ours: readonly AssignedVlan[];
}

/** Waits out a pending batch, reads the device and drives its ports to what they are without our VLANs. */
async function unassignOnDevice(scope: MachineNetworkScope, access: MetalAccess, at: Unassigning): Promise<StepOutcome> {
  const status = (scope.machineNetwork.status ??= {});
  const polled = await pollBatchOfDeletion(scope, access.metal);
  if (polled.kind === 'pending') {
    deleting(scope, 'waiting for a VLAN batch to complete before unassigning');
    return waitFor(polled.afterMs);
  }
  const device = await readDevice(access.metal, at.deviceId, scope.rctx.signal);
  if (device === undefined) {
    status.assignedVlans = [];
    delete status.pendingBatch;
    return proceed;
  }
  const vlans = await scope.ctx.vlans.list(access.metal, {
    credentials: access.credentials,
    projectId: access.projectId,
    metro: device.metro?.code ?? access.metro ?? '',
    wanted: [],
    signal: scope.rctx.signal,
  });
  const desired = portsWithoutOurVlans(observePorts(device.network_ports ?? [], vlans).ports, at.ours);
  const driven = await drivePorts(scope, { metal: access.metal, device, desired, vlans });
  return afterUnassigning(scope, at, driven);
}

/** The ports as they are, less the VLANs (tagged or native) this controller assigned. */
export function portsWithoutOurVlans(
  observed: readonly ObservedPort[],
  ours: readonly Pick<AssignedVlan, 'portID' | 'vlanID'>[],
): DesiredPort[] {
  const ourIds = new Set(ours.map((v) => `${v.portID}/${v.vlanID}`));
  return observed.map((p) => {
    const keep = p.vlans.filter((v) => !ourIds.has(`${p.id}/${v.id}`));
    const native = p.nativeVlan !== undefined && !ourIds.has(`${p.id}/${p.nativeVlan.id}`) ? p.nativeVlan.vxlan : undefined;
    return {
      name: p.name,
      bonded: p.bonded,
      ...(p.isBond ? { layer2: p.layer2 } : {}),
      vlans: keep.map((v) => v.vxlan).filter((v): v is number => v !== undefined),
      ...(native === undefined ? {} : { nativeVlan: native }),
    };
  });
}

/** What the drive left to do; the Event names the VLANs recorded before it (the drive edits the record). */
function afterUnassigning(scope: MachineNetworkScope, { deviceId, ours }: Unassigning, driven: DriveResult): StepOutcome {
  const { ctx, machineNetwork: mn } = scope;
  const status = (mn.status ??= {});
  switch (driven.kind) {
    case 'refused':
      deleting(scope, `cannot unassign VLANs of device ${deviceId}: ${driven.message}`);
      return waitFor(ctx.timings.metalRetryMs * 10);
    case 'batch-started':
      deleting(scope, `unassigning VLANs on ${status.pendingBatch?.port ?? 'a port'}`);
      return waitFor(ctx.timings.batchPollMs);
    case 'converged':
      if (driven.callCount > 0 || ours.length > 0) {
        ctx.events.event(mn, {
          type: 'Normal',
          reason: MachineNetworkEventReasons.vlansUnassigned,
          message: `unassigned VLANs ${ours.map((v) => `${v.port}:${v.vxlan}`).join(', ')}`,
        });
      }
      status.assignedVlans = [];
      return proceed;
  }
}

/**
 * Postcondition: every claim this machine made is gone (the IPAM provider released its address).
 * The record in status and the claims carrying our label are both honoured, so a claim created
 * just before a crash is not left behind.
 */
export async function releaseClaims(scope: MachineNetworkScope): Promise<StepOutcome> {
  const { ctx, machineNetwork: mn } = scope;
  const names = new Set((mn.status?.claims ?? []).map((c) => c.name));
  for (const claim of ctx.caches.claims.byIndex(IndexNames.claimByMachineNetwork, `${scope.namespace}/${scope.name}`))
    names.add(claim.metadata.name ?? '');
  const remaining: string[] = [];
  let deleted = 0;
  for (const name of names) {
    const claim: IPAddressClaim | undefined = ctx.caches.claims.get({ namespace: scope.namespace, name });
    if (claim === undefined) continue;
    if (!(claim.metadata.ownerReferences ?? []).some((o) => o.uid === mn.metadata.uid)) continue;
    remaining.push(name);
    if (claim.metadata.deletionTimestamp !== undefined) continue;
    try {
      await ctx.client.delete(
        ctx.types.claim,
        { namespace: scope.namespace, name },
        { signal: scope.rctx.signal, ...(claim.metadata.uid === undefined ? {} : { preconditions: { uid: claim.metadata.uid } }) },
      );
      deleted++;
    } catch (err: unknown) {
      if (!isNotFound(err)) return failed(new Error(`delete IPAddressClaim ${describe(scope, name)}`, { cause: err }));
    }
  }
  if (deleted > 0)
    ctx.events.event(mn, {
      type: 'Normal',
      reason: MachineNetworkEventReasons.claimsReleased,
      message: `released ${deleted} IPAddressClaim(s)`,
    });
  if (remaining.length > 0) {
    deleting(scope, `waiting for IPAddressClaims to be released: ${remaining.join(', ')}`);
    return waitFor();
  }
  return proceed;
}

/** Postcondition: the MachineNetwork may go (the API server deletes it once the patch lands). */
export async function removeFinalizer(scope: MachineNetworkScope): Promise<StepOutcome> {
  const { ctx, machineNetwork: mn } = scope;
  const finalizers = mn.metadata.finalizers ?? [];
  if (!finalizers.includes(NetworkFinalizers.machineNetwork)) return proceed;
  try {
    await ctx.client.patch(
      MachineNetworkType,
      { namespace: scope.namespace, name: scope.name },
      { metadata: { finalizers: finalizers.filter((f) => f !== NetworkFinalizers.machineNetwork) } },
      { ...(mn.metadata.resourceVersion === undefined ? {} : { resourceVersion: mn.metadata.resourceVersion }), signal: scope.rctx.signal },
    );
  } catch (err: unknown) {
    if (!isNotFound(err)) return failed(new Error(`remove the finalizer of MachineNetwork ${describe(scope)}`, { cause: err }));
  }
  return proceed;
}
