import { RELEASE_MARK_BYTES, encodedEntryBytes, type Allocation } from '@metal-l2/ipam-core';

// Allocations live in the pool's status, so the pool object grows with every claim, and the API
// server refuses to store an object past etcd's request limit (1.5 MiB by default). Measured on a
// real API server (test/status-ceiling.test.ts): past about 1.5 MiB it first drops the object's
// managedFields, then refuses the write ("etcdserver: request is too large"). The controller keeps
// the whole object, managedFields included, under a budget well below that, and says so when a
// claim has to wait for room.

/**
 * The default budget for a pool object: 1.25 MiB, about 83 % of etcd's default 1.5 MiB request
 * limit. The margin leaves room for other writers (labels, annotations, other field managers),
 * for the object's envelope in etcd, and for the API server's own additions.
 */
export const DEFAULT_STATUS_BUDGET_BYTES = 1_310_720;

/** etcd's default request limit (1.5 MiB): no object this size or larger is ever stored. */
export const MAX_STATUS_BUDGET_BYTES = 1_572_864;

/**
 * Kept under the budget for the status besides allocations (conditions and their messages,
 * counts, observedGeneration), so a commit that fits the estimate fits the object.
 */
export const STATUS_RESERVE_BYTES = 4_096;

/**
 * The managedFields entry a merge patch of status.allocations records per address for our field
 * manager: `"f:<address>":{},`.
 */
export function managedFieldsEntryBytes(address: string): number {
  return address.length + 8;
}

export interface CostOptions {
  /**
   * A pool with a reuse grace period marks a released entry with its release time instead of
   * dropping it, which makes the entry longer: reserved up front, so that a release always fits
   * (a release must never wait for room).
   */
  readonly reservesReleaseMark: boolean;
}

/** What one allocation costs in the stored object: its status entry and its managedFields key. */
export function allocationCost(allocation: Allocation, options: CostOptions): number {
  const mark = options.reservesReleaseMark && allocation.releasedAt === undefined ? RELEASE_MARK_BYTES : 0;
  return encodedEntryBytes(allocation) + managedFieldsEntryBytes(allocation.address) + mark;
}

export function allocationsCost(allocations: readonly Allocation[], options: CostOptions): number {
  let total = 0;
  for (const allocation of allocations) total += allocationCost(allocation, options);
  return total;
}

/** The pool object's size against its budget, for one pass. */
export interface StatusBudget {
  readonly budgetBytes: number;
  /** The pool object as last measured (JSON, managedFields included). */
  readonly objectBytes: number;
  /**
   * Of which status.conditions: left out of the room, since the reserve stands for them. So the
   * room does not shrink when the Ready message grows (as it does once the pool is full), and a
   * release always makes room for an allocation of the same size.
   */
  readonly conditionsBytes?: number;
}

/**
 * Bytes a plan may add to the status for new allocations: the budget, less the reserve, less the
 * object without its allocations and conditions, less the allocations that stay (recovered and
 * released ones included, since those are written whatever the budget says).
 */
export function roomFor(
  budget: StatusBudget,
  allocations: { readonly before: readonly Allocation[]; readonly after: readonly Allocation[] },
  options: CostOptions,
): number {
  const rest = budget.objectBytes - (budget.conditionsBytes ?? 0) - allocationsCost(allocations.before, options);
  return budget.budgetBytes - STATUS_RESERVE_BYTES - rest - allocationsCost(allocations.after, options);
}

/**
 * A rough per-allocation figure for a pool that has no allocations yet (the webhook's warning):
 * an address of the pool's longest form and a claim name of the given length.
 */
export function estimatedAllocationBytes(input: { readonly addressLength: number; readonly claimNameLength: number }): number {
  return input.addressLength + input.claimNameLength + 6 + managedFieldsEntryBytes('x'.repeat(input.addressLength));
}
