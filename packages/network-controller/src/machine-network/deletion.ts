import {
  MachineNetworkConditionTypes,
  MachineNetworkEventReasons,
  MachineNetworkReasons,
  NetworkFinalizers,
  MachineNetworkType,
  type AssignedVlan,
} from '@metal-l2/api';
import {
  isMetalGone,
  isMetalHttpError,
  metalErrorIn,
  observePorts,
  type DesiredPort,
  type MetalClient,
  type ObservedPort,
} from '@metal-l2/metal-api';
import { failed, finalizersWithout, isConflict, isNotFound, proceed, type StepOutcome, waitFor, writeFinalizers } from '@metal-l2/kube';
import { machineMetal, readRemainingDevice, type MetalAccess } from '../metal/machine-metal.js';
import { afterMetalError, DEVICE_INCLUDES, drivePorts, pollPendingBatch, type BatchPoll, type DriveResult } from './port-driver.js';
import { keepClaims, ownedClaims } from './kept-claims.js';
import { describe, type MachineNetworkScope, markCondition } from './scope.js';

function deleting(scope: MachineNetworkScope, message: string): void {
  markCondition(
    scope.machineNetwork,
    { type: MachineNetworkConditionTypes.ready, status: 'False', reason: MachineNetworkReasons.deleting, message },
    scope.now,
  );
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
 * the network: keep-network.ts). But the server may still be up with the VLANs and the addresses
 * (CAPP, with the same revoked token, cannot delete it either): the claims are kept
 * (kept-claims.ts) until Metal says the device is gone, and a Warning Event on the MachineNetwork
 * and its PacketMachine names what was not checked and which addresses are kept.
 */
async function cannotCheck(scope: MachineNetworkScope, at: { readonly deviceId: string; readonly why: string }): Promise<StepOutcome> {
  const { ctx, machineNetwork: mn, packetMachine: pm } = scope;
  const status = (mn.status ??= {});
  let kept: string[];
  try {
    kept = await keepClaims(scope, { deviceID: at.deviceId, why: at.why });
  } catch (err: unknown) {
    return failed(err);
  }
  const vlans = (status.assignedVlans ?? []).map((v) => `${v.port}:${v.vxlan}`).join(', ');
  const addresses =
    kept.length === 0
      ? ''
      : `; its addresses ${kept.join(', ')} are kept until Metal says the device is gone: fix the token (or credentials, or PacketCluster), or delete those IPAddressClaims to release them now`;
  const message = `could not check VLANs ${vlans} of device ${at.deviceId} (${at.why}): the MachineNetwork is deleted without unassigning them${addresses}`;
  for (const obj of pm === undefined ? [mn] : [mn, pm])
    ctx.events.event(obj, { type: 'Warning', reason: MachineNetworkEventReasons.vlansNotChecked, message });
  scope.rctx.logger.info('deletion goes on without unassigning VLANs', { why: at.why, keptClaims: kept.length });
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
  if (access.kind === 'missing') return cannotCheck(scope, { deviceId, why: access.message });
  try {
    return await unassignOnDevice(scope, access, { deviceId, ours });
  } catch (err: unknown) {
    if (tokenRefused(err))
      return cannotCheck(scope, { deviceId, why: `Metal refused the token: ${err instanceof Error ? err.message : String(err)}` });
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
  const device = await readRemainingDevice(access.metal, at.deviceId, { include: DEVICE_INCLUDES, signal: scope.rctx.signal });
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
 * Postcondition: every claim this machine made and still owns is gone (the IPAM provider released
 * its address); claims kept for a device that could not be checked are no longer ours. The record
 * in status and the claims carrying our owner reference are both honoured (ownedClaims).
 */
export async function releaseClaims(scope: MachineNetworkScope): Promise<StepOutcome> {
  const { ctx, machineNetwork: mn } = scope;
  const remaining: string[] = [];
  let deleted = 0;
  for (const claim of ownedClaims(scope)) {
    const name = claim.metadata.name ?? '';
    remaining.push(name);
    if (claim.metadata.deletionTimestamp !== undefined) continue;
    try {
      // This very version: one that was kept a moment ago (cannotCheck) and that the cache still
      // shows owned by us must not be deleted; the Conflict waits for the cache to show it kept.
      const { uid, resourceVersion } = claim.metadata;
      await ctx.client.delete(
        ctx.types.claim,
        { namespace: scope.namespace, name },
        {
          signal: scope.rctx.signal,
          preconditions: { ...(uid === undefined ? {} : { uid }), ...(resourceVersion === undefined ? {} : { resourceVersion }) },
        },
      );
      deleted++;
    } catch (err: unknown) {
      if (isConflict(err)) continue;
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
  const finalizers = finalizersWithout(mn, NetworkFinalizers.machineNetwork);
  if (finalizers === undefined) return proceed;
  try {
    await writeFinalizers(ctx.client, { type: MachineNetworkType, object: mn, finalizers, signal: scope.rctx.signal });
  } catch (err: unknown) {
    if (!isNotFound(err)) return failed(new Error(`remove the finalizer of MachineNetwork ${describe(scope)}`, { cause: err }));
  }
  return proceed;
}
