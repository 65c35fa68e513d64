/**
 * Lowest-free allocation over interval sets.
 *
 * The state the pool reconciler keeps for a pool between status writes is two RangeSets: what the
 * pool may hand out (`allocatable`) and what is taken (`used`, merged into runs). Because `used` is
 * merged, the address after a used run is never used, so the first free address of a pool is found
 * with two binary searches, whatever the number of allocations: a /16 with 60,000 addresses taken
 * from the bottom is one run, not 60,000 set lookups (the reference provider scans linearly from
 * the first address on every claim). A batch of N allocations walks the gaps once and merges the
 * new runs into `used` once, O(N + runs).
 *
 * States are immutable values: `allocate` and `releaseAddresses` return a new state, so a reconcile
 * can compute a group commit, try to write it, and on a conflict simply drop it and start again from
 * the re-read status.
 */
import type { Address, IPFamily } from './address.js';
import { countRangeAddresses, lowerBoundRange, rangesContain, rangesFromValues, subtractRanges, unionRanges } from './range.js';
import type { AddressRange, RangeSet } from './range.js';

export interface AllocationState {
  readonly family: IPFamily;
  /** What the pool may hand out (a ResolvedPool's `allocatable`). */
  readonly allocatable: RangeSet;
  /**
   * Every address held by an allocation, including those kept for the reuse grace period and
   * those outside `allocatable` (the pool was changed under them): they are never handed out.
   */
  readonly used: RangeSet;
  /** Allocations of the other family (cannot be in this pool); counted as out of range. */
  readonly otherFamilyCount: number;
}

export interface CreateAllocationStateInput {
  readonly family: IPFamily;
  readonly allocatable: RangeSet;
  /** Addresses held today; duplicates and other-family addresses are tolerated. */
  readonly used: Iterable<Address>;
}

/** One claim's wish in a group commit: the lowest free address, or a given one. */
export interface AllocationRequest {
  readonly requestedAddress?: Address | undefined;
}

export type AllocationResult =
  | { readonly kind: 'allocated'; readonly address: bigint }
  | { readonly kind: 'exhausted' }
  | { readonly kind: 'requested-address-taken'; readonly address: bigint }
  | { readonly kind: 'requested-address-not-in-pool'; readonly address: Address };

export interface AllocateOutcome {
  /** The state with every `allocated` result taken. */
  readonly state: AllocationState;
  /** One result per request, in request order. */
  readonly results: readonly AllocationResult[];
}

/** Builds the state from the pool's allocatable set and the addresses held today. */
export function createAllocationState(input: CreateAllocationStateInput): AllocationState {
  const values: bigint[] = [];
  let otherFamilyCount = 0;
  for (const address of input.used) {
    if (address.family === input.family) values.push(address.value);
    else otherFamilyCount++;
  }
  return { family: input.family, allocatable: input.allocatable, used: rangesFromValues(values), otherFamilyCount };
}

/** Whether an allocation holds this address (in grace or not). O(log n). */
export function isAllocated(state: AllocationState, address: bigint): boolean {
  return rangesContain(state.used, address);
}

/** Whether the address is allocatable and not held. O(log n). */
export function isFree(state: AllocationState, address: bigint): boolean {
  return rangesContain(state.allocatable, address) && !rangesContain(state.used, address);
}

/** The lowest free address at or after `from` (default: the pool's first), or undefined when full. */
export function nextFree(state: AllocationState, from?: bigint): bigint | undefined {
  const first = freeAddresses(state, from).next();
  return first.done === true ? undefined : first.value;
}

/**
 * Free addresses in ascending order, lazily. Each gap between used runs costs one step, so taking
 * k addresses costs O(log n + k + runs skipped).
 */
export function* freeAddresses(state: AllocationState, from?: bigint): Generator<bigint, void, undefined> {
  const { allocatable, used } = state;
  let r = from === undefined ? 0 : lowerBoundRange(allocatable, from);
  let u = 0;
  for (; r < allocatable.length; r++) {
    const range = allocatable[r] as AddressRange;
    let candidate = from !== undefined && from > range.start ? from : range.start;
    while (candidate <= range.end) {
      u = lowerBoundRange(used, candidate, u);
      const run = used[u];
      if (run === undefined || run.start > candidate) {
        // Free from candidate up to the next run or the end of the range.
        const gapEnd = run === undefined || run.start > range.end ? range.end : run.start - 1n;
        for (let address = candidate; address <= gapEnd; address++) yield address;
        candidate = gapEnd + 1n;
      } else {
        candidate = run.end + 1n;
      }
    }
  }
}

/**
 * Takes addresses for a batch of claims (the group commit of one status write). Requested
 * addresses are served first, in request order, so a lowest-free request in the same batch can
 * never take an address another claim asked for by name; a second request for the same address
 * gets `requested-address-taken`. The others get the lowest free addresses in request order, and
 * `exhausted` once the pool is full.
 */
export function allocate(state: AllocationState, requests: readonly AllocationRequest[]): AllocateOutcome {
  const taken: bigint[] = [];
  const takenByName = new Set<bigint>();
  const namedResults = new Map<number, AllocationResult>();

  requests.forEach((request, index) => {
    const wanted = request.requestedAddress;
    if (wanted === undefined) return;
    if (wanted.family !== state.family || !rangesContain(state.allocatable, wanted.value)) {
      namedResults.set(index, { kind: 'requested-address-not-in-pool', address: wanted });
    } else if (rangesContain(state.used, wanted.value) || takenByName.has(wanted.value)) {
      namedResults.set(index, { kind: 'requested-address-taken', address: wanted.value });
    } else {
      takenByName.add(wanted.value);
      taken.push(wanted.value);
      namedResults.set(index, { kind: 'allocated', address: wanted.value });
    }
  });

  const free = freeAddresses(state);
  const results = requests.map((_request, index): AllocationResult => {
    const named = namedResults.get(index);
    if (named !== undefined) return named;
    let next = free.next();
    while (next.done !== true && takenByName.has(next.value)) next = free.next();
    if (next.done === true) return { kind: 'exhausted' };
    taken.push(next.value);
    return { kind: 'allocated', address: next.value };
  });

  const newState = taken.length === 0 ? state : { ...state, used: unionRanges(state.used, rangesFromValues(taken)) };
  return { state: newState, results };
}

/** Gives addresses back (claim deleted and grace over). Unknown addresses are ignored. */
export function releaseAddresses(state: AllocationState, addresses: Iterable<bigint>): AllocationState {
  const released = rangesFromValues(addresses);
  if (released.length === 0) return state;
  return { ...state, used: subtractRanges(state.used, released) };
}

/** Number of held addresses of the pool's family (in or out of the allocatable set). */
export function countUsed(state: AllocationState): bigint {
  return countRangeAddresses(state.used);
}
