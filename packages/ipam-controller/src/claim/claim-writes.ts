import { IpamFinalizers, type IPAddress, type IPAddressClaim } from '@metal-l2/api';
import { finalizersWith, finalizersWithout, isAlreadyExists, isConflict, isNotFound, writeFinalizers } from '@metal-l2/kube';
import type { IpamContext } from '../context.js';
import { claimStatusPatch, type ClaimOutcome, type ClaimView } from './claim-contract.js';

// The contract chores on claims and IPAddresses, kept apart from allocation (as ipamutil does):
// each function is idempotent and reads the object again only when a guarded write lost a race.

/** Returns the resourceVersion the claim has after the change (undefined when it is gone). */
async function patchFinalizers(
  ctx: Pick<IpamContext, 'claimType' | 'client' | 'ownWrites'>,
  claim: ClaimView,
  change: (claim: IPAddressClaim) => string[] | undefined,
): Promise<string | undefined> {
  let current: IPAddressClaim | undefined = claim.object;
  for (let attempt = 0; attempt < 5 && current !== undefined; attempt++) {
    const object: IPAddressClaim = current;
    const finalizers = change(object);
    if (finalizers === undefined) return object.metadata.resourceVersion;
    try {
      const patched = await ctx.ownWrites.claims.writing('', claim.uid, () =>
        writeFinalizers<IPAddressClaim>(ctx.client, { type: ctx.claimType, object, finalizers }),
      );
      return patched.metadata.resourceVersion;
    } catch (err: unknown) {
      if (isNotFound(err)) return undefined;
      if (!isConflict(err)) throw err;
      current = await ctx.client.get<IPAddressClaim>(ctx.claimType, { namespace: claim.namespace, name: claim.name });
    }
  }
  return current?.metadata.resourceVersion;
}

/**
 * How long our claim writes and IPAddress creates are remembered over the cache (OwnWrites): they
 * are not forgotten one by one while the claims stay bound, and a burst keeps one entry per claim.
 */
export const CLAIM_WRITES_TTL_MS = 300_000;

/** Where ownWrites.addresses keeps our create of the IPAddress `key`. */
export function addressWriteKey(key: { readonly namespace?: string | undefined; readonly name?: string | undefined }): string {
  return `address:${key.namespace ?? ''}/${key.name ?? ''}`;
}

const addedFinalizer = { what: 'finalizer', value: 'added' } as const;

export async function ensureClaimFinalizer(ctx: Pick<IpamContext, 'claimType' | 'client' | 'ownWrites'>, claim: ClaimView): Promise<void> {
  const version = claim.object.metadata.resourceVersion;
  if (
    claim.hasFinalizer ||
    claim.isDeleting ||
    ctx.ownWrites.claims.alreadyWrote('', claim.uid, { ...addedFinalizer, cachedVersion: version })
  )
    return;
  const produced = await patchFinalizers(ctx, claim, (c) => finalizersWith(c, IpamFinalizers.releaseAddress));
  ctx.ownWrites.claims.wrote('', claim.uid, { ...addedFinalizer, basedOn: version, produced });
}

export async function removeClaimFinalizer(ctx: Pick<IpamContext, 'claimType' | 'client' | 'ownWrites'>, claim: ClaimView): Promise<void> {
  if (!claim.hasFinalizer) return;
  await patchFinalizers(ctx, claim, (c) => finalizersWithout(c, IpamFinalizers.releaseAddress));
  ctx.ownWrites.claims.forgetWrites('', claim.uid);
}

/** Writes the claim's Ready condition (and addressRef) when they differ from the outcome. */
export async function writeClaimStatus(
  ctx: Pick<IpamContext, 'claimType' | 'client' | 'now' | 'ownWrites' | 'version'>,
  claim: ClaimView,
  outcome: ClaimOutcome,
): Promise<void> {
  const patch = claimStatusPatch(claim.object, outcome, { version: ctx.version, now: ctx.now() });
  if (patch === undefined) return;
  // The IPAddress is named after its claim: its name (up to 253 characters) is left out of the
  // signature then, which a burst keeps for every claim for a time to live.
  const signature = JSON.stringify(
    outcome.kind === 'bound' && outcome.addressName === claim.name ? { ...outcome, addressName: '' } : outcome,
  );
  const version = claim.object.metadata.resourceVersion;
  if (ctx.ownWrites.claims.alreadyWrote('', claim.uid, { what: 'status', value: signature, cachedVersion: version })) return;
  try {
    const written = await ctx.ownWrites.claims.writing('', claim.uid, () =>
      ctx.client.patchStatus<IPAddressClaim>(ctx.claimType, { namespace: claim.namespace, name: claim.name }, { status: patch.status }),
    );
    ctx.ownWrites.claims.wrote('', claim.uid, {
      what: 'status',
      value: signature,
      basedOn: version,
      produced: written.metadata.resourceVersion,
    });
  } catch (err: unknown) {
    if (!isNotFound(err)) throw err;
  }
}

export type EnsureAddressResult =
  | { readonly kind: 'ok' }
  /** `existing`: the IPAddress that stands in the way, when there is one. */
  | { readonly kind: 'conflict'; readonly message: string; readonly existing?: IPAddress };

/**
 * Creates the IPAddress for an allocation. One that already exists is accepted when it says the
 * same thing, and reported (never overwritten) when it does not.
 */
export async function ensureIPAddress(
  ctx: Pick<IpamContext, 'addressType' | 'caches' | 'client' | 'ownWrites'>,
  desired: IPAddress,
): Promise<EnsureAddressResult> {
  const key = { namespace: desired.metadata.namespace ?? '', name: desired.metadata.name ?? '' };
  const memoryKey = addressWriteKey(key);
  if (hasIPAddress(ctx, desired)) return { kind: 'ok' };
  const cached = ctx.caches.addresses.get(key);
  const created = { what: 'created', value: desired.spec.address };
  if (cached === undefined && ctx.ownWrites.addresses.alreadyWrote('', memoryKey, { ...created, cachedVersion: undefined }))
    return { kind: 'ok' };
  let existing = cached;
  if (existing === undefined) {
    try {
      const answer = await ctx.ownWrites.addresses.writing('', memoryKey, () => ctx.client.create(ctx.addressType, desired));
      ctx.ownWrites.addresses.wrote('', memoryKey, { ...created, basedOn: undefined, produced: answer.metadata.resourceVersion });
      return { kind: 'ok' };
    } catch (err: unknown) {
      if (!isAlreadyExists(err)) throw err;
      existing = await ctx.client.get<IPAddress>(ctx.addressType, key);
      if (existing === undefined)
        return { kind: 'conflict', message: `IPAddress ${key.namespace}/${key.name} was deleted while being created; retrying` };
    }
  }
  if (matches(existing, desired)) return { kind: 'ok' };
  return {
    kind: 'conflict',
    existing,
    message: `IPAddress ${key.namespace}/${key.name} exists with address ${existing.spec.address} for pool ${existing.spec.poolRef.kind} ${existing.spec.poolRef.name}, but the pool allocated ${desired.spec.address}; not overwriting it`,
  };
}

/** Whether the cache has the IPAddress as desired (ensureIPAddress would write nothing). */
export function hasIPAddress(ctx: Pick<IpamContext, 'caches'>, desired: IPAddress): boolean {
  const cached = ctx.caches.addresses.get({ namespace: desired.metadata.namespace ?? '', name: desired.metadata.name ?? '' });
  return cached !== undefined && matches(cached, desired);
}

function matches(existing: IPAddress, desired: IPAddress): boolean {
  return (
    existing.spec.address === desired.spec.address &&
    existing.spec.claimRef.name === desired.spec.claimRef.name &&
    existing.spec.poolRef.kind === desired.spec.poolRef.kind &&
    existing.spec.poolRef.name === desired.spec.poolRef.name
  );
}

/**
 * Removes our finalizer from the IPAddress and deletes it. Returns true once the API server no
 * longer has it (asked directly, not the cache), which is when its address may be released.
 */
export async function deleteIPAddress(
  ctx: Pick<IpamContext, 'addressType' | 'client' | 'ownWrites'>,
  key: { namespace: string; name: string },
): Promise<boolean> {
  const current = await ctx.client.get<IPAddress>(ctx.addressType, key);
  if (current === undefined) return true;
  const finalizers = finalizersWithout(current, IpamFinalizers.protectAddress);
  if (finalizers !== undefined) {
    try {
      await writeFinalizers(ctx.client, { type: ctx.addressType, object: current, finalizers });
    } catch (err: unknown) {
      if (isNotFound(err)) return true;
      if (isConflict(err)) return false;
      throw err;
    }
  }
  ctx.ownWrites.addresses.forgetWrites('', addressWriteKey(key));
  if (current.metadata.deletionTimestamp === undefined) await ctx.client.delete(ctx.addressType, key);
  return (await ctx.client.get(ctx.addressType, key)) === undefined;
}
