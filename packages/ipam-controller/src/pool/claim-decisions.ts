import { ClaimReasons, type IPAddress } from '@metal-l2/api';
import {
  buildIPAddress,
  claimKey,
  claimStatusPatch,
  clusterStateOf,
  mayActOn,
  mayRelease,
  type ClaimOutcome,
  type ClaimView,
} from '../claim/claim-contract.js';
import { deleteIPAddress, ensureClaimFinalizer, ensureIPAddress, removeClaimFinalizer, writeClaimStatus } from '../claim/claim-writes.js';
import type { IpamContext } from '../context.js';
import { forEachBounded } from '../parallel.js';
import type { AllocationPlan, ClaimDecision } from './allocation-plan.js';
import { formatPoolRef, type PoolRef } from '../pool-ref.js';
import type { PoolScope } from './pool-scope.js';

// The claim side of a pool pass: before the commit, IPAddresses of deleting claims go (so their
// addresses may be released); after it, IPAddresses, finalizers and claim status follow status.

/**
 * A deleting claim's address is released only after its IPAddress is gone (asked of the API
 * server), so an existing IPAddress always has its allocation in status; while another
 * controller's finalizer holds the claim, neither goes (mayRelease). Orphaned IPAddresses,
 * whose claim the API server confirmed gone (confirmUncachedClaims), are removed the same way.
 */
export async function removeAddressesOfDeletingClaims(
  ctx: IpamContext,
  scope: PoolScope,
  orphans: readonly IPAddress[],
): Promise<ClaimView[]> {
  const deleting = scope.claims.filter((c) => mayRelease(ctx, c));
  const releasable: ClaimView[] = [];
  await forEachBounded(
    [
      ...deleting.map((c) => ({ claim: c, address: undefined, key: { namespace: c.namespace, name: c.name } })),
      ...orphans.map((a) => ({
        claim: undefined,
        address: a,
        key: { namespace: a.metadata.namespace ?? '', name: a.metadata.name ?? '' },
      })),
    ],
    ctx.writeConcurrency,
    async ({ claim, address, key }) => {
      const gone = await deleteIPAddress(ctx, key);
      if (gone && claim !== undefined) releasable.push(claim);
      // A left claim's IPAddress deleted (its address released by hand): nothing to remember of it.
      if (gone && address !== undefined) ctx.leftAddresses.delete(address.metadata.uid ?? '');
    },
  );
  return releasable;
}

function outcomeOf(ctx: IpamContext, scope: PoolScope, decision: ClaimDecision): ClaimOutcome {
  switch (decision.kind) {
    case 'bound':
      return { kind: 'bound', addressName: decision.claim.name, address: decision.address };
    case 'exhausted':
      return { kind: 'waiting', reason: ClaimReasons.poolExhausted, message: `${formatPoolRef(scope.ref)} has no free address` };
    case 'failed':
      return { kind: 'waiting', reason: ClaimReasons.allocationFailed, message: decision.message };
    case 'not-ready':
      return {
        kind: 'waiting',
        reason: ClaimReasons.poolNotReady,
        message: `${formatPoolRef(scope.ref)} is not ready: ${scope.blocker?.message ?? 'its spec is invalid'}`,
      };
  }
}

/**
 * The gateway IPAddresses carry: the spec's, or else the Metal Gateway's (the pool's routed
 * gateway on the VLAN), so machines learn it without the user copying it from status.
 */
function gatewayOf(scope: PoolScope): string | undefined {
  return scope.pool.spec.gateway ?? (scope.pool.spec.vrf?.metalGateway === true ? scope.vrf?.gatewayAddress : undefined);
}

function desiredAddress(ctx: IpamContext, scope: PoolScope, decision: ClaimDecision & { kind: 'bound' }): IPAddress {
  return buildIPAddress({
    claim: decision.claim,
    pool: { ...scope.ref, uid: scope.pool.metadata.uid ?? '' },
    address: decision.address,
    prefix: scope.pool.spec.prefix,
    gateway: gatewayOf(scope),
    version: ctx.version,
  });
}

/**
 * A bound claim whose finalizer, IPAddress and status the cache already shows as they should be:
 * the writes below would send nothing. Sorted out in one synchronous sweep, so a pass over a full
 * pool costs a check per claim it leaves alone, not an asynchronous write step.
 */
function isSettled(ctx: IpamContext, scope: PoolScope, decision: ClaimDecision): boolean {
  if (decision.kind !== 'bound' || !decision.claim.hasFinalizer) return false;
  const patch = claimStatusPatch(decision.claim.object, outcomeOf(ctx, scope, decision), { version: ctx.version, now: ctx.now() });
  return patch === undefined && hasCachedAddress(ctx, scope, decision);
}

/**
 * hasIPAddress of the IPAddress desiredAddress would build, without building it: looked up by the
 * claim's key (made once per claim version) and compared on what ensureIPAddress compares.
 */
function hasCachedAddress(ctx: IpamContext, scope: PoolScope, decision: ClaimDecision & { kind: 'bound' }): boolean {
  const cached = ctx.caches.addresses.get(claimKey(decision.claim));
  if (cached === undefined) return false;
  const { spec } = cached;
  return (
    spec.address === decision.address &&
    spec.claimRef.name === decision.claim.name &&
    spec.poolRef.kind === scope.ref.kind &&
    spec.poolRef.name === scope.ref.name
  );
}

/** After the commit: IPAddresses, finalizers and claim status follow what status now says. */
export async function applyDecisions(ctx: IpamContext, scope: PoolScope, plan: AllocationPlan): Promise<void> {
  const conflicts: string[] = [];
  const pending = plan.decisions.filter((d) => !isSettled(ctx, scope, d));
  await forEachBounded(pending, ctx.writeConcurrency, async (decision) => {
    const { claim } = decision;
    if (decision.kind === 'bound') {
      await ensureClaimFinalizer(ctx, claim);
      const result = await ensureIPAddress(ctx, desiredAddress(ctx, scope, decision));
      if (result.kind === 'conflict') {
        const held = heldAddressOf(plan, claim, result.existing);
        if (held !== undefined) {
          // Another writer bound this claim to another address of this pool, which our blocks
          // hold for it too (two blocks gave it an address): its IPAddress decides, and the next
          // pass drops the other entry.
          await writeClaimStatus(ctx, claim, { kind: 'bound', addressName: claim.name, address: held });
          return;
        }
        conflicts.push(result.message);
        await writeClaimStatus(ctx, claim, { kind: 'waiting', reason: ClaimReasons.allocationFailed, message: result.message });
        return;
      }
    }
    await writeClaimStatus(ctx, claim, outcomeOf(ctx, scope, decision));
  });
  await forEachBounded(plan.released, ctx.writeConcurrency, (claim) => removeClaimFinalizer(ctx, claim));
  if (conflicts.length > 0) {
    ctx.events.event(scope.pool, { type: 'Warning', reason: 'AllocationConflict', message: conflicts.slice(0, 5).join('; ') });
  }
}

/** The address an existing IPAddress gives the claim, when the plan holds it for the claim too. */
function heldAddressOf(plan: AllocationPlan, claim: ClaimView, existing: IPAddress | undefined): string | undefined {
  if (existing === undefined) return undefined;
  const address = existing.spec.address;
  const entry = plan.allocations.find((a) => a.address === address && a.releasedAt === undefined);
  if (entry === undefined || entry.claim.name !== claim.name) return undefined;
  return entry.claim.namespace === undefined || entry.claim.namespace === claim.namespace ? address : undefined;
}

/**
 * Claims of a pool that does not exist wait with PoolNotReady, and get the address as soon as the
 * pool appears. A deleting claim is let go (its IPAddress removed first) since no pool holds its address.
 */
export async function settleClaimsOfMissingPool(ctx: IpamContext, ref: PoolRef, claims: readonly ClaimView[]): Promise<void> {
  await forEachBounded(claims, ctx.writeConcurrency, async (claim) => {
    if (!mayActOn(claim, clusterStateOf(ctx, claim))) return;
    if (claim.isDeleting) {
      if (mayRelease(ctx, claim) && (await deleteIPAddress(ctx, { namespace: claim.namespace, name: claim.name })))
        await removeClaimFinalizer(ctx, claim);
      return;
    }
    if (claim.object.status?.addressRef?.name !== undefined) return;
    await writeClaimStatus(ctx, claim, { kind: 'waiting', reason: ClaimReasons.poolNotReady, message: `${formatPoolRef(ref)} not found` });
  });
}
