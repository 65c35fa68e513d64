import {
  allocate,
  createAllocationState,
  expireReleased,
  formatAddress,
  formatClaimRef,
  parseAddress,
  releaseClaims,
  type Address,
  type Allocation,
  type AllocationRequest,
  type AllocationState,
  type ClaimRef,
  type ResolvedPool,
} from '@metal-l2/ipam-core';
import { ByClaim, claimKey, type ClaimView } from '../claim/claim-contract.js';

/** An IPAddress of this pool as the plan needs it. */
export interface AddressView {
  readonly namespace: string;
  readonly name: string;
  readonly claimName: string;
  readonly address: string;
}

export interface AllocationPlanInput {
  /** Namespaced pools store claims without namespace (it is the pool's); global pools with it. */
  readonly isGlobal: boolean;
  readonly pool: ResolvedPool;
  /** Decoded status.allocations. */
  readonly allocations: readonly Allocation[];
  /** Claims of this pool that the provider may act on now (not paused, cluster present or deleting). */
  readonly claims: readonly ClaimView[];
  /** Claims of this pool that exist but must be left alone (paused); their allocations are kept. */
  readonly heldClaims: readonly ClaimView[];
  /**
   * Claims of a global pool that left this management cluster unreleased (clusterctl move): their
   * IPAddresses stay as the record, and their allocations are kept (and rebuilt) as a live claim's.
   */
  readonly leftClaims?: readonly LiveClaimRef[] | undefined;
  /** Deleting claims whose IPAddress is confirmed gone: their allocation may be released. */
  readonly releasable: readonly ClaimView[];
  /** IPAddresses that reference this pool. */
  readonly addresses: readonly AddressView[];
  /** False while the pool cannot hand out addresses (invalid, paused, VRF not ready, deleting). */
  readonly canAllocate: boolean;
  readonly gracePeriodSeconds: number;
  readonly now: Date;
  /**
   * The namespace the controller watches, when it watches one (`--namespace`). A global pool's
   * allocations for claims elsewhere belong to another controller's view: never treat them as vanished.
   */
  readonly watchNamespace?: string | undefined;
}

export type ClaimDecision =
  | { readonly kind: 'bound'; readonly claim: ClaimView; readonly address: string }
  | { readonly kind: 'exhausted'; readonly claim: ClaimView }
  | { readonly kind: 'failed'; readonly claim: ClaimView; readonly message: string }
  | { readonly kind: 'not-ready'; readonly claim: ClaimView };

export interface AllocationPlan {
  /** The allocations to write; equal to the input when `changed` is false. */
  readonly allocations: readonly Allocation[];
  readonly changed: boolean;
  /** One decision per acting, non-deleting claim. */
  readonly decisions: readonly ClaimDecision[];
  /** Deleting claims whose allocation is gone after this write: their finalizer may go. */
  readonly released: readonly ClaimView[];
  /** Allocations taken in this write (for logs and metrics). */
  readonly newlyAllocated: number;
  /**
   * Those allocations themselves: a write that commits some of its blocks and loses a race on
   * another counts the ones in the blocks it wrote, since the next pass finds them held.
   */
  readonly taken: ReadonlySet<Allocation>;
  /** Allocations recreated from IPAddress objects (status lost or behind). */
  readonly recovered: number;
  /** Second entries of a claim held in two blocks, dropped (settleDuplicates). */
  readonly duplicatesDropped: number;
  /**
   * Claims still held in two blocks because their IPAddress, which decides, is not in the cache
   * yet (this pass may be creating it): the pool needs another pass once it is.
   */
  readonly duplicatesPending: number;
  /** Disagreements between status and IPAddress objects; reported, never overwritten. */
  readonly conflicts: readonly string[];
  /** When the next grace period ends, to come back then. */
  readonly nextExpiryInMs?: number | undefined;
  readonly state: AllocationState;
}

/**
 * Decides one group commit for a pool, purely: recover allocations from IPAddress objects when
 * status lost them, release what deleted or vanished claims held, let grace periods expire, then
 * give every waiting claim an address (requested ones first) in a single pass.
 */
export function planAllocations(input: AllocationPlanInput): AllocationPlan {
  const refOf = (claim: { namespace: string; name: string }): ClaimRef =>
    input.isGlobal ? { namespace: claim.namespace, name: claim.name } : { name: claim.name };
  const liveClaims = liveClaimsOf(input);
  const settled = settleDuplicates(input, refOf);
  const recovery = recover({ ...input, allocations: settled.allocations }, { refOf, liveClaims });
  const release = releaseGone(input, { allocations: recovery.allocations, refOf, liveClaims });
  const allocation = allocateWaiting(input, { allocations: release.allocations, refOf });
  const allocations = allocation.allocations;
  const releasedKeys =
    input.releasable.length === 0 ? new Set<string>() : new Set(allocations.filter((a) => a.releasedAt === undefined).map(claimRefKey));
  return {
    allocations,
    changed: settled.changed || recovery.changed || release.changed || allocation.newlyAllocated > 0,
    decisions: allocation.decisions,
    released: input.releasable.filter((c) => !releasedKeys.has(formatClaimRef(refOf(c)))),
    newlyAllocated: allocation.newlyAllocated,
    taken: allocation.taken,
    recovered: recovery.recovered,
    duplicatesDropped: settled.dropped,
    duplicatesPending: settled.pending,
    conflicts: recovery.conflicts,
    nextExpiryInMs: release.nextExpiryInMs,
    state: allocation.state,
  };
}

type RefOf = (claim: { namespace: string; name: string }) => ClaimRef;

/** A claim whose allocation is kept: by namespace and name. */
export interface LiveClaimRef {
  readonly namespace: string;
  readonly name: string;
}

/**
 * Claims whose allocations are kept, by `namespace/name`: those the cache has, whether the
 * provider may act on them now or must leave them alone, and those that left unreleased.
 */
function liveClaimsOf(input: AllocationPlanInput): Map<string, LiveClaimRef> {
  const live = new Map<string, LiveClaimRef>();
  for (const c of input.leftClaims ?? []) live.set(`${c.namespace}/${c.name}`, c);
  for (const c of input.claims) live.set(claimKey(c), c);
  for (const c of input.heldClaims) live.set(claimKey(c), c);
  return live;
}

/** liveClaimsOf by namespace and name, for lookups from IPAddresses (recover). */
function byNamespaceAndName(live: ReadonlyMap<string, LiveClaimRef>): ByClaim<LiveClaimRef> {
  const byClaim = new ByClaim<LiveClaimRef>();
  for (const c of live.values()) byClaim.set(c.namespace, c.name, c);
  return byClaim;
}

/**
 * A claim held in two blocks (two writers whose views of different blocks were stale each gave it
 * an address): its IPAddress, created after the block write and named like the claim, decides
 * which address it has, and the other entries are dropped (a leak repaired, never a duplicate).
 * Until that IPAddress exists every entry stays, so neither address can go to another claim.
 */
function settleDuplicates(
  input: AllocationPlanInput,
  refOf: RefOf,
): { allocations: readonly Allocation[]; changed: boolean; dropped: number; pending: number } {
  // Claims held twice are rare: the first entry of each claim is kept aside, arrays only for those.
  const first = new Map<string, Allocation>();
  const byClaim = new Map<string, Allocation[]>();
  for (const a of input.allocations) {
    if (a.releasedAt !== undefined) continue;
    const key = claimRefKey(a);
    const held = first.get(key);
    if (held === undefined) first.set(key, a);
    else byClaim.set(key, [...(byClaim.get(key) ?? [held]), a]);
  }
  if (byClaim.size === 0) return { allocations: input.allocations, changed: false, dropped: 0, pending: 0 };
  const dropped = new Set<Allocation>();
  let decided = 0;
  for (const ip of input.addresses) {
    const entries = byClaim.get(formatClaimRef(refOf({ namespace: ip.namespace, name: ip.claimName })));
    if (entries === undefined || entries.length < 2) continue;
    const address = canonicalOf(ip);
    if (!entries.some((a) => a.address === address)) continue;
    decided += 1;
    for (const a of entries) if (a.address !== address) dropped.add(a);
  }
  const pending = byClaim.size - decided;
  if (dropped.size === 0) return { allocations: input.allocations, changed: false, dropped: 0, pending };
  return { allocations: input.allocations.filter((a) => !dropped.has(a)), changed: true, dropped: dropped.size, pending };
}

/**
 * Recover: an IPAddress of a live claim whose address status does not hold gets its allocation
 * back (status lost or behind: clusterctl move, a restore). Disagreements are reported, never
 * resolved by overwriting either side.
 */
function recover(
  input: AllocationPlanInput,
  current: { refOf: RefOf; liveClaims: ReadonlyMap<string, LiveClaimRef> },
): { allocations: Allocation[]; changed: boolean; recovered: number; conflicts: string[] } {
  const { refOf, liveClaims } = current;
  const allocations: Allocation[] = [...input.allocations];
  const conflicts: string[] = [];
  const byAddress = new Map<string, Allocation>();
  const activeByClaim = new Map<string, Allocation>();
  for (const a of allocations) {
    byAddress.set(a.address, a);
    if (a.releasedAt === undefined) activeByClaim.set(claimRefKey(a), a);
  }
  let recovered = 0;
  const live = byNamespaceAndName(liveClaims);
  for (const ip of input.addresses) {
    const claim = live.get(ip.namespace, ip.claimName);
    if (claim === undefined) continue;
    const address = canonicalOf(ip);
    if (address === undefined) continue;
    const holder = byAddress.get(address);
    if (holder !== undefined) {
      // The common case, an IPAddress that status agrees with, compares keys and builds nothing.
      if (
        input.isGlobal ? holder.claim.namespace !== claim.namespace || holder.claim.name !== claim.name : claimRefKey(holder) !== claim.name
      ) {
        conflicts.push(`IPAddress ${ip.namespace}/${ip.name} has ${address}, which status gives to ${formatClaimRef(holder.claim)}`);
      }
      continue;
    }
    const ref = refOf(claim);
    const other = activeByClaim.get(formatClaimRef(ref));
    if (other !== undefined) {
      conflicts.push(`IPAddress ${ip.namespace}/${ip.name} has ${address}, but status gives its claim ${other.address}`);
      continue;
    }
    const entry: Allocation = { address, claim: ref };
    allocations.push(entry);
    byAddress.set(address, entry);
    activeByClaim.set(claimRefKey(entry), entry);
    recovered++;
  }
  return { allocations, changed: recovered > 0, recovered, conflicts };
}

/**
 * Release: deleting claims whose IPAddress is gone, and entries whose claim vanished; then
 * released entries whose grace period ended leave status.
 */
function releaseGone(
  input: AllocationPlanInput,
  current: { allocations: Allocation[]; refOf: RefOf; liveClaims: ReadonlyMap<string, LiveClaimRef> },
): { allocations: Allocation[]; changed: boolean; nextExpiryInMs: number | undefined } {
  const { refOf } = current;
  let allocations = current.allocations;
  let changed = false;
  const releasedRefs = input.releasable.map(refOf);
  // A namespaced pool's refs are claim names; a global pool's are `namespace/name`, the live key.
  const liveRefs = input.isGlobal ? current.liveClaims : new Set([...current.liveClaims.values()].map((c) => c.name));
  const isWatched = (claim: ClaimRef): boolean =>
    input.watchNamespace === undefined || claim.namespace === undefined || claim.namespace === input.watchNamespace;
  const vanished = allocations
    .filter((a) => a.releasedAt === undefined && isWatched(a.claim) && !liveRefs.has(claimRefKey(a)))
    .map((a) => a.claim);
  const toRelease = [...releasedRefs, ...vanished];
  if (toRelease.length > 0) {
    const next = releaseClaims(allocations, toRelease, { now: input.now, gracePeriodSeconds: input.gracePeriodSeconds });
    if (!sameAllocations(next, allocations)) {
      allocations = next;
      changed = true;
    }
  }
  const expiry = expireReleased(allocations, { now: input.now, gracePeriodSeconds: input.gracePeriodSeconds });
  if (expiry.expired.length > 0) {
    allocations = [...expiry.allocations];
    changed = true;
  }
  return { allocations, changed, nextExpiryInMs: expiry.nextExpiryInMs };
}

/** Allocate: every acting claim without an address, in one pass (requested addresses first). */
function allocateWaiting(
  input: AllocationPlanInput,
  current: { allocations: Allocation[]; refOf: RefOf },
): {
  allocations: Allocation[];
  decisions: ClaimDecision[];
  newlyAllocated: number;
  taken: ReadonlySet<Allocation>;
  state: AllocationState;
} {
  const { refOf } = current;
  const allocations = [...current.allocations];
  const held = new Map<string, Allocation>();
  for (const a of allocations) {
    // A claim still held twice (settleDuplicates) is bound to its first entry until its IPAddress decides.
    if (a.releasedAt !== undefined) continue;
    const key = claimRefKey(a);
    if (!held.has(key)) held.set(key, a);
  }
  const used: Address[] = [];
  for (const a of allocations) {
    const parsed = addressOf(a);
    if (parsed !== undefined) used.push(parsed);
  }
  const state = createAllocationState({ family: input.pool.family, allocatable: input.pool.allocatable, used });
  const decisions: ClaimDecision[] = [];
  const waiting: ClaimView[] = [];
  const requests: AllocationRequest[] = [];
  for (const claim of input.claims) {
    if (claim.isDeleting) continue;
    const existing = held.get(formatClaimRef(refOf(claim)));
    if (existing !== undefined) {
      decisions.push({ kind: 'bound', claim, address: existing.address });
      continue;
    }
    if (!input.canAllocate) {
      decisions.push({ kind: 'not-ready', claim });
      continue;
    }
    if (claim.requestedAddress !== undefined) {
      const requested = parseAddress(claim.requestedAddress.trim());
      if (requested === undefined) {
        decisions.push({
          kind: 'failed',
          claim,
          message: `requested address ${JSON.stringify(claim.requestedAddress)} is not an IP address`,
        });
        continue;
      }
      waiting.push(claim);
      requests.push({ requestedAddress: requested });
      continue;
    }
    waiting.push(claim);
    requests.push({});
  }
  const outcome = allocate(state, requests);
  const taken = new Set<Allocation>();
  outcome.results.forEach((result, i) => {
    const claim = waiting[i];
    if (claim === undefined) return;
    switch (result.kind) {
      case 'allocated': {
        const address = formatAddress({ family: input.pool.family, value: result.address });
        const allocation: Allocation = { address, claim: refOf(claim) };
        allocations.push(allocation);
        taken.add(allocation);
        decisions.push({ kind: 'bound', claim, address });
        break;
      }
      case 'exhausted':
        decisions.push({ kind: 'exhausted', claim });
        break;
      case 'requested-address-taken':
        decisions.push({
          kind: 'failed',
          claim,
          message: `requested address ${formatAddress({ family: input.pool.family, value: result.address })} is already allocated`,
        });
        break;
      case 'requested-address-not-in-pool':
        decisions.push({
          kind: 'failed',
          claim,
          message: `requested address ${formatAddress(result.address)} is not an allocatable address of the pool`,
        });
        break;
    }
  });
  return { allocations, decisions, newlyAllocated: taken.size, taken, state: outcome.state };
}

function canonical(text: string): string | undefined {
  const parsed = parseAddress(text);
  return parsed === undefined ? undefined : formatAddress(parsed);
}

// A pass reads every allocation, claim and IPAddress of its pool, nearly all of them the same
// objects as in the pass before (a block is decoded once per version, the caches hand out one
// object per version): what the plan derives from one (its parsed address, its key) is kept with
// it, so an unchanged object costs a lookup, not a parse, whatever the pool's fill.
const parsedAddresses = new WeakMap<Allocation, Address | null>();
const refKeys = new WeakMap<ClaimRef, string>();
const canonicalAddresses = new WeakMap<AddressView, string | null>();

function addressOf(a: Allocation): Address | undefined {
  let parsed = parsedAddresses.get(a);
  if (parsed === undefined) parsedAddresses.set(a, (parsed = parseAddress(a.address) ?? null));
  return parsed ?? undefined;
}

/** formatClaimRef of the allocation's claim. */
function claimRefKey(a: Allocation): string {
  let key = refKeys.get(a.claim);
  if (key === undefined) refKeys.set(a.claim, (key = formatClaimRef(a.claim)));
  return key;
}

function canonicalOf(ip: AddressView): string | undefined {
  let text = canonicalAddresses.get(ip);
  if (text === undefined) canonicalAddresses.set(ip, (text = canonical(ip.address) ?? null));
  return text ?? undefined;
}

function sameAllocations(a: readonly Allocation[], b: readonly Allocation[]): boolean {
  return a.length === b.length && a.every((x, i) => x.address === b[i]?.address && x.releasedAt === b[i]?.releasedAt);
}
