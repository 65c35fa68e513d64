// The public surface of @metal-l2/ipam-core: pure address math and allocation, no I/O.
export { addressBits, formatAddress, formatCidr, maxAddressValue, normalizeAddress, parseAddress } from './address.js';
export type { Address, IPFamily } from './address.js';

export { formatClaimRef, isReleased, isSameClaim } from './allocation.js';
export type { Allocation, ClaimRef } from './allocation.js';

export { allocate, countUsed, createAllocationState, freeAddresses, isAllocated, isFree, nextFree, releaseAddresses } from './allocator.js';
export type { AllocateOutcome, AllocationRequest, AllocationResult, AllocationState, CreateAllocationStateInput } from './allocator.js';

export { clampCount, countAddresses, toStatusCounts } from './counts.js';
export type { AddressCounts, StatusAddressCounts } from './counts.js';

export { IssueCode, formatIssue, formatIssuePath, formatIssues } from './issues.js';
export type { FormatIssueOptions, Issue, IssuePathSegment } from './issues.js';

export { findPoolOverlap, overlapIssue, poolsOverlap } from './overlap.js';
export type { OverlapIssueInput } from './overlap.js';

export {
  countAllocatable,
  describeAllocatable,
  findAddressesOutsidePool,
  formatSubnet,
  parseAddressEntry,
  resolvePoolSpec,
  validatePoolSpec,
} from './pool-spec.js';
export type { AddressEntry, PoolSpec, ResolvePoolResult, ResolvedPool } from './pool-spec.js';

export {
  countRangeAddresses,
  formatRange,
  formatRanges,
  intersectRanges,
  normalizeRanges,
  rangeOfPrefix,
  rangesContain,
  rangesContainRange,
  rangesFromValues,
  rangesOverlap,
  subtractRanges,
  unionRanges,
} from './range.js';
export type { AddressRange, RangeSet } from './range.js';

export { expireReleased, formatReleaseTimestamp, isReusable, releaseClaims } from './release.js';
export type { ExpireResult, GracePeriodOptions } from './release.js';

export { RELEASE_MARK_BYTES, decodeAllocations, encodeAllocations, encodedEntryBytes } from './status-codec.js';
export type { DecodeAllocationsResult, EncodedAllocations } from './status-codec.js';
