import { RELEASE_MARK_BYTES, encodedEntryBytes, type Allocation } from '@metal-l2/ipam-core';

// The API server refuses to store an object past etcd's request limit (1.5 MiB by default).
// Measured on a real API server (test/status-ceiling.test.ts): past about 1.5 MiB it first drops
// the object's managedFields, then refuses the write ("etcdserver: request is too large").
// Allocations live in IPAddressBlocks, each a bounded sub-range of its pool: the budget bounds a
// block (--block-size must fit it with the longest entries, block/block-layout.ts), so no object
// grows with a pool's fill.

/**
 * The default budget for an object holding allocations: 1.25 MiB, about 83 % of etcd's default 1.5 MiB request
 * limit. The margin leaves room for other writers (labels, annotations, other field managers),
 * for the object's envelope in etcd, and for the API server's own additions.
 */
export const DEFAULT_STATUS_BUDGET_BYTES = 1_310_720;

/** etcd's default request limit (1.5 MiB): no object this size or larger is ever stored. */
export const MAX_STATUS_BUDGET_BYTES = 1_572_864;

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
