/**
 * The allocation record kept in pool status, the source of truth for who holds which address.
 * Plain data: the status codec turns a list of these into the status field and back, the release
 * functions mark and expire them, the allocator reads their addresses.
 */

/** The IPAddressClaim holding an address. No namespace = the pool's own namespace. */
export interface ClaimRef {
  readonly namespace?: string | undefined;
  readonly name: string;
}

export interface Allocation {
  /** Canonical address text (see `formatAddress`). */
  readonly address: string;
  readonly claim: ClaimRef;
  /**
   * Set when the claim let go of the address and `addressReuseGracePeriodSeconds` keeps it
   * reserved: RFC 3339 UTC with second precision, like Kubernetes timestamps.
   */
  readonly releasedAt?: string | undefined;
}

/** `namespace/name`, or `name` when the claim has no namespace: for messages and map keys. */
export function formatClaimRef(claim: ClaimRef): string {
  return claim.namespace === undefined ? claim.name : `${claim.namespace}/${claim.name}`;
}

/** Same claim: same name and same namespace (both absent counts as the same). */
export function isSameClaim(a: ClaimRef, b: ClaimRef): boolean {
  return a.name === b.name && a.namespace === b.namespace;
}

/** Whether the allocation is only held for the reuse grace period. */
export function isReleased(allocation: Allocation): boolean {
  return allocation.releasedAt !== undefined;
}
