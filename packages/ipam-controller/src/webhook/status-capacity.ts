import type { IPPool } from '@metal-l2/api';
import { RELEASE_MARK_BYTES, countRangeAddresses, formatAddress, resolvePoolSpec } from '@metal-l2/ipam-core';
import { STATUS_RESERVE_BYTES, estimatedAllocationBytes } from '../pool/status-budget.js';

/**
 * Claim name length the warning assumes: names as Cluster API and the network controller make
 * them (`<machine>-<port>-v<vxlan>-<n>`) run 30 to 50 characters.
 */
export const TYPICAL_CLAIM_NAME_LENGTH = 40;

/** A global pool's entries carry the claim's namespace too: assumed this long, plus the `/`. */
const TYPICAL_NAMESPACE_LENGTH = 16;

/**
 * What the pool object carries besides allocations once the controller has written its status
 * (managedFields, conditions, counts): measured at about 1.2 KiB on a real API server, rounded up.
 */
const STATUS_OVERHEAD_BYTES = 2_048;

/**
 * An admission warning (allowed anyway) when the pool has more addresses than its status can
 * record under the controller's size budget with typical claim names: past that, claims wait with
 * PoolStatusFull although addresses are free. Empty when it fits, or when the spec is invalid
 * (the denial says why).
 */
export function statusCapacityWarnings(pool: IPPool, budgetBytes: number): string[] {
  const resolved = resolvePoolSpec(pool.spec);
  if (!resolved.ok) return [];
  const { allocatable, family } = resolved.pool;
  const addresses = countRangeAddresses(allocatable);
  const highest = allocatable.at(-1);
  if (highest === undefined) return [];
  const addressLength = formatAddress({ family, value: highest.end }).length;
  const namespaceBytes = pool.kind === 'GlobalInClusterIPPool' ? TYPICAL_NAMESPACE_LENGTH + 1 : 0;
  const releaseMark = (pool.spec.addressReuseGracePeriodSeconds ?? 0) > 0 ? RELEASE_MARK_BYTES : 0;
  const perAllocation =
    estimatedAllocationBytes({ addressLength, claimNameLength: TYPICAL_CLAIM_NAME_LENGTH }) + namespaceBytes + releaseMark;
  const room = budgetBytes - STATUS_RESERVE_BYTES - STATUS_OVERHEAD_BYTES - Buffer.byteLength(JSON.stringify(pool));
  const fit = Math.max(0, Math.floor(room / perAllocation));
  if (addresses <= BigInt(fit)) return [];
  return [
    `pool has ${addresses} addresses; its status fits ~${fit} allocations (${TYPICAL_CLAIM_NAME_LENGTH}-char claim names, ${budgetBytes}-byte budget)`,
  ];
}
