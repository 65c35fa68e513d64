import { MachineNetworkEventReasons, NetworkAnnotations, type IPAddressClaim, type OwnerReference } from '@metal-l2/api';
import { done, isNotFound, requeueAfter, type ReconcileContext, type ReconcileResult } from '@metal-l2/kube';
import { IndexNames, type NetworkContext } from '../context.js';
import { metalToken, readRemainingDevice } from '../metal/machine-metal.js';
import { describe, type MachineNetworkScope } from './scope.js';

// A machine deleted while its device cannot be checked (a token Metal refuses, no credentials, no
// PacketCluster) still ends its MachineNetwork's deletion (DESIGN §3.3 step 7), but its server may
// still be up with our VLAN and its address: CAPP, with the same revoked token, cannot delete it
// either. Releasing the address then lets the next machine get an address a live server answers
// on. So the claims are kept: their owner reference to the MachineNetwork goes (the garbage
// collector would delete them with it), a record says which device they wait for, and a
// controller of their own deletes them (the IPAM provider releases the addresses) once that
// device is gone. An operator who knows better deletes the claims.

/** What a kept claim waits for: its device, read with the token its MachineNetwork used. */
export interface KeptRecord {
  /** The deleted MachineNetwork (the key of the kept-address controller, with the namespace). */
  readonly machineNetwork: string;
  readonly deviceID: string;
  /** The Secret (in the claim's namespace) the template named; the controller's default when absent. */
  readonly credentialsSecret?: string;
}

/** The record on a kept claim; undefined on every other claim (or a record someone broke). */
export function keptRecordOf(claim: IPAddressClaim): KeptRecord | undefined {
  const raw = claim.metadata.annotations?.[NetworkAnnotations.keptFor];
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { machineNetwork, deviceID, credentialsSecret } = parsed as Record<string, unknown>;
  if (typeof machineNetwork !== 'string' || typeof deviceID !== 'string' || machineNetwork === '' || deviceID === '') return undefined;
  return typeof credentialsSecret === 'string' && credentialsSecret !== ''
    ? { machineNetwork, deviceID, credentialsSecret }
    : { machineNetwork, deviceID };
}

/**
 * The claims of a MachineNetwork, as the cache shows them: those its status records and those
 * carrying its owner reference (a claim created just before a crash is in the second only),
 * owned by it (its uid), deleting or not.
 */
export function ownedClaims(scope: MachineNetworkScope): IPAddressClaim[] {
  const { ctx, machineNetwork: mn } = scope;
  const names = new Set((mn.status?.claims ?? []).map((c) => c.name));
  for (const claim of ctx.caches.claims.byIndex(IndexNames.claimByMachineNetwork, describe(scope))) names.add(claim.metadata.name ?? '');
  return [...names]
    .map((name) => ctx.caches.claims.get({ namespace: scope.namespace, name }))
    .filter((c): c is IPAddressClaim => c !== undefined && (c.metadata.ownerReferences ?? []).some((o) => o.uid === mn.metadata.uid));
}

/**
 * Postcondition: no live claim is owned by this MachineNetwork any more; each carries the kept
 * record of `deviceID` and why, so neither the garbage collector nor releaseClaims takes it.
 * Returns every address kept for that device (as status recorded them, else the claim names),
 * for the Event: those kept now and those an earlier pass kept (the step runs again after a
 * conflicting write, and its Warning must say the same thing again, not that nothing is kept).
 */
export async function keepClaims(scope: MachineNetworkScope, at: { readonly deviceID: string; readonly why: string }): Promise<string[]> {
  const { ctx, machineNetwork: mn } = scope;
  const credentialsSecret = mn.spec.credentialsSecretRef?.name;
  const record: KeptRecord = {
    machineNetwork: scope.name,
    deviceID: at.deviceID,
    ...(credentialsSecret === undefined ? {} : { credentialsSecret }),
  };
  const because =
    `device ${at.deviceID} could not be checked (${at.why}): its server may still use this address. ` +
    `It is released once Metal says the device is gone (checked about every ${Math.round(ctx.timings.driftCheckMs / 1000)} s); ` +
    `fix what was missing, or delete this IPAddressClaim to release the address now`;
  const keptNames = new Set(keptEarlier(scope, at.deviceID));
  let keptNow = 0;
  for (const claim of ownedClaims(scope).filter((c) => c.metadata.deletionTimestamp === undefined)) {
    const owners: OwnerReference[] = (claim.metadata.ownerReferences ?? []).filter((o) => o.uid !== mn.metadata.uid);
    const name = claim.metadata.name ?? '';
    try {
      await ctx.client.patch(
        ctx.types.claim,
        { namespace: scope.namespace, name },
        {
          metadata: {
            ownerReferences: owners.length === 0 ? null : owners,
            annotations: { [NetworkAnnotations.keptFor]: JSON.stringify(record), [NetworkAnnotations.keptBecause]: because },
          },
        },
        {
          ...(claim.metadata.resourceVersion === undefined ? {} : { resourceVersion: claim.metadata.resourceVersion }),
          signal: scope.rctx.signal,
        },
      );
    } catch (err: unknown) {
      if (isNotFound(err)) continue;
      throw new Error(`keep IPAddressClaim ${describe(scope, name)} for device ${at.deviceID}`, { cause: err });
    }
    keptNames.add(name);
    keptNow++;
  }
  if (keptNow > 0)
    scope.rctx.logger.info('kept address claims for a device that could not be checked', { count: keptNow, deviceID: at.deviceID });
  return [...keptNames].sort().map((name) => {
    const address = (mn.status?.addresses ?? []).find((a) => a.claimName === name);
    return address === undefined ? `claim ${name}` : `${address.address} (claim ${name})`;
  });
}

/** The claims an earlier pass kept for this MachineNetwork and device, as the cache shows them. */
function keptEarlier(scope: MachineNetworkScope, deviceID: string): string[] {
  return scope.ctx.caches.claims
    .byIndex(IndexNames.keptClaimByMachineNetwork, describe(scope))
    .filter((c) => c.metadata.deletionTimestamp === undefined && keptRecordOf(c)?.deviceID === deviceID)
    .map((c) => c.metadata.name ?? '');
}

/** Kept claims grouped by what checks them: one device read per device and token. */
function byDevice(claims: readonly IPAddressClaim[]): Map<string, { record: KeptRecord; claims: IPAddressClaim[] }> {
  const groups = new Map<string, { record: KeptRecord; claims: IPAddressClaim[] }>();
  for (const claim of claims) {
    const record = keptRecordOf(claim);
    if (record === undefined) continue;
    const id = `${record.deviceID}/${record.credentialsSecret ?? ''}`;
    const group = groups.get(id) ?? { record, claims: [] };
    group.claims.push(claim);
    groups.set(id, group);
  }
  return groups;
}

/** Whether the device is gone, as Metal says it with the record's token; undefined when it could not be asked. */
async function deviceGone(
  ctx: NetworkContext,
  at: { namespace: string; record: KeptRecord; rctx: ReconcileContext },
): Promise<boolean | undefined> {
  const token = await metalToken(ctx, { namespace: at.namespace, credentialsSecret: at.record.credentialsSecret, rctx: at.rctx });
  if (token.kind === 'missing') {
    at.rctx.logger.info('kept addresses: their device cannot be checked', { deviceID: at.record.deviceID, reason: token.reason });
    return undefined;
  }
  try {
    const gone = (await readRemainingDevice(token.metal, at.record.deviceID, { signal: at.rctx.signal })) === undefined;
    // A server still up keeps its addresses: someone must delete it (CAPP, once it can) or the claims.
    if (!gone) at.rctx.logger.info('kept addresses: their device is still there', { deviceID: at.record.deviceID });
    return gone;
  } catch (err: unknown) {
    at.rctx.logger.info('kept addresses: their device cannot be checked', {
      deviceID: at.record.deviceID,
      err: err instanceof Error ? err.message : String(err),
    });
    return undefined;
  }
}

/** Deletes the kept claims of a device that is gone (this very claim: uid precondition); the IPAM provider releases the addresses. */
async function releaseKept(
  ctx: NetworkContext,
  at: { namespace: string; claims: readonly IPAddressClaim[]; rctx: ReconcileContext },
): Promise<void> {
  for (const claim of at.claims) {
    const name = claim.metadata.name ?? '';
    const deleted = await ctx.client.delete(
      ctx.types.claim,
      { namespace: at.namespace, name },
      { signal: at.rctx.signal, ...(claim.metadata.uid === undefined ? {} : { preconditions: { uid: claim.metadata.uid } }) },
    );
    if (!deleted) continue;
    ctx.events.event(
      { apiVersion: `${ctx.types.claim.group}/${ctx.types.claim.version}`, kind: ctx.types.claim.kind, metadata: claim.metadata },
      {
        type: 'Normal',
        reason: MachineNetworkEventReasons.keptAddressReleased,
        message: `device ${keptRecordOf(claim)?.deviceID ?? ''} is gone: the kept claim is deleted and its address released`,
      },
    );
  }
  at.rctx.logger.info('released kept address claims: their device is gone', { count: at.claims.length });
}

/**
 * Reconciles the kept claims of one deleted MachineNetwork (key: its namespace/name): each
 * device that Metal says is gone (404, deprovisioning) gets its claims deleted; the others are
 * looked at again one drift period later (a fixed token is then noticed). Nothing kept: done.
 */
export async function reconcileKeptClaims(
  ctx: NetworkContext,
  key: { namespace: string; name: string },
  rctx: ReconcileContext,
): Promise<ReconcileResult> {
  const claims = ctx.caches.claims
    .byIndex(IndexNames.keptClaimByMachineNetwork, `${key.namespace}/${key.name}`)
    .filter((c) => c.metadata.deletionTimestamp === undefined);
  let waiting = false;
  for (const { record, claims: kept } of byDevice(claims).values()) {
    const gone = await deviceGone(ctx, { namespace: key.namespace, record, rctx });
    if (gone === true) await releaseKept(ctx, { namespace: key.namespace, claims: kept, rctx });
    else waiting = true;
  }
  return waiting ? requeueAfter(ctx.timings.driftCheckMs) : done();
}
