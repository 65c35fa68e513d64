/**
 * The `status.allocations` codec.
 *
 * Format: a map from canonical address to claim,
 *
 * ```yaml
 * allocations:
 *   10.0.0.10: md-0-x7k2p-9bq4z-bond0-1000      # claim in the pool's namespace
 *   10.0.0.11: team-a/cp-5x9wq-bond0-1000       # claim in another namespace (global pools)
 *   10.0.0.12: md-0-abcde-fghij-bond0-1000@2025-01-02T03:04:05Z   # released, in grace period
 * ```
 *
 * Value grammar: `[namespace "/"] name ["@" releasedAt]`. Neither a namespace (DNS label) nor a
 * claim name (DNS subdomain) can contain `/` or `@`, so the value is unambiguous.
 *
 * Why a map keyed by address rather than a list of entries:
 * - A duplicate address cannot even be written: the key is the address, so the one invariant that
 *   matters is carried by the shape of the data.
 * - A JSON merge patch of a map touches only the keys that changed: committing 50 allocations sends
 *   50 keys, not the whole list again (a list is replaced wholesale by a merge patch).
 * - It reads well in `kubectl get -o yaml`: one line per address, `address: claim`.
 * - It is compact: about 52 bytes per IPv4 allocation with a 36-character claim name, so 16,384
 *   allocations take 0.82 MiB of the 1.5 MiB etcd object limit (0.94 MiB for a global pool whose
 *   entries all carry `default/`); the unit test asserts it and bench/ prints it. Claim names
 *   dominate: the encoder adds about 16 bytes per IPv4 entry on top of `[namespace/]name`, so names
 *   up to ~75 characters still fit 16,384 entries under 1.5 MiB.
 * Only `releasedAt` is stored besides the claim: the allocation time is the IPAddress object's
 * creationTimestamp, and 16k timestamps would cost another ~350 KB.
 *
 * Stability: keys are emitted in byte order of their text, which is the order in which Go's
 * encoding/json (and so the API server) writes map keys. Encoding the decoded status of an
 * unchanged pool gives the same bytes the API server returned, so an unchanged status is never
 * patched.
 */
import { formatAddress, parseAddress } from './address.js';
import type { Address } from './address.js';
import type { Allocation, ClaimRef } from './allocation.js';
import { IssueCode } from './issues.js';
import type { Issue } from './issues.js';

/** The JSON value of `status.allocations`. */
export type EncodedAllocations = Record<string, string>;

export interface DecodeAllocationsResult {
  /** Valid entries, sorted by address (numerically, IPv4 before IPv6). */
  readonly allocations: readonly Allocation[];
  /** Entries that could not be decoded (and were left out), path `[address key]`. */
  readonly issues: readonly Issue[];
}

const NAMESPACE = '[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?';
const NAME = '[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?';
const TIMESTAMP = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z';
const VALUE_PATTERN = new RegExp(`^(?:(${NAMESPACE})/)?(${NAME})(?:@(${TIMESTAMP}))?$`);
const NAMESPACE_PATTERN = new RegExp(`^${NAMESPACE}$`);
const NAME_PATTERN = new RegExp(`^${NAME}$`);
const TIMESTAMP_PATTERN = new RegExp(`^${TIMESTAMP}$`);

/**
 * Encodes allocations for `status.allocations`. Throws on an allocation that cannot be written
 * faithfully (non-canonical address, duplicate address, name with `/` or `@`, bad timestamp): the
 * allocator never produces one, so it would be a bug, and writing it would corrupt the source of truth.
 */
export function encodeAllocations(allocations: readonly Allocation[]): EncodedAllocations {
  const entries: [string, string][] = [];
  const seen = new Set<string>();
  for (const allocation of allocations) {
    const { address } = allocation;
    const parsed = parseAddress(address);
    if (parsed === undefined || formatAddress(parsed) !== address) {
      throw new RangeError(`allocation address ${JSON.stringify(address)} is not a canonical IP address`);
    }
    if (seen.has(address)) {
      throw new RangeError(`address ${address} is allocated twice`);
    }
    seen.add(address);
    entries.push([address, encodeValue(allocation)]);
  }
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const encoded: EncodedAllocations = {};
  for (const [key, value] of entries) encoded[key] = value;
  return encoded;
}

/**
 * Decodes `status.allocations` as read from the API server. Absent (a new pool, or a status lost
 * to `clusterctl move` or a restore) decodes to no allocations. Keys are normalised, so a
 * hand-edited `10.0.0.010`-style key is refused, `FD00::1` is read as `fd00::1`; two keys naming one
 * address keep the first in key order and report the other.
 */
export function decodeAllocations(encoded: unknown): DecodeAllocationsResult {
  if (encoded === undefined || encoded === null) return { allocations: [], issues: [] };
  if (typeof encoded !== 'object' || Array.isArray(encoded)) {
    return {
      allocations: [],
      issues: [{ code: IssueCode.InvalidAllocation, path: [], message: 'allocations must be a map from address to claim' }],
    };
  }
  const issues: Issue[] = [];
  const decoded = new Map<string, { parsed: Address; allocation: Allocation }>();
  const keys = Object.keys(encoded).sort();
  const record = encoded as Record<string, unknown>;
  for (const key of keys) {
    const value = record[key];
    const parsed = parseAddress(key);
    if (parsed === undefined) {
      issues.push({ code: IssueCode.InvalidAllocation, path: [key], message: 'allocation key is not a valid IP address', value: key });
      continue;
    }
    const claim = typeof value === 'string' ? decodeValue(value) : undefined;
    if (claim === undefined) {
      issues.push({
        code: IssueCode.InvalidAllocation,
        path: [key],
        message: 'allocation value is not [namespace/]claim-name[@releasedAt]',
        ...(typeof value === 'string' ? { value } : {}),
      });
      continue;
    }
    const address = formatAddress(parsed);
    if (decoded.has(address)) {
      issues.push({
        code: IssueCode.DuplicateAllocation,
        path: [key],
        message: `address ${address} is allocated more than once`,
        value: key,
      });
      continue;
    }
    decoded.set(address, { parsed, allocation: { address, ...claim } });
  }
  const allocations = [...decoded.values()].sort((a, b) => compareAddresses(a.parsed, b.parsed)).map((entry) => entry.allocation);
  return { allocations, issues };
}

/**
 * The bytes one allocation takes in the JSON of `status.allocations` as the API server writes it
 * (`"address":"value",`, no spaces). Names are DNS names, so characters are bytes. Lets a caller
 * keep the status under a byte budget without encoding the whole map again per entry.
 */
export function encodedEntryBytes(allocation: Allocation): number {
  const { claim, releasedAt } = allocation;
  const who = claim.namespace === undefined ? claim.name.length : claim.namespace.length + 1 + claim.name.length;
  return allocation.address.length + who + (releasedAt === undefined ? 0 : RELEASE_MARK_BYTES) + 6;
}

/** What a release within the grace period adds to an entry: `@2026-01-02T03:04:05Z`. */
export const RELEASE_MARK_BYTES = 21;

function encodeValue(allocation: Allocation): string {
  const { claim, releasedAt } = allocation;
  if (!NAME_PATTERN.test(claim.name)) {
    throw new RangeError(`claim name ${JSON.stringify(claim.name)} of ${allocation.address} is not a valid object name`);
  }
  if (claim.namespace !== undefined && !NAMESPACE_PATTERN.test(claim.namespace)) {
    throw new RangeError(`claim namespace ${JSON.stringify(claim.namespace)} of ${allocation.address} is not a valid namespace`);
  }
  if (releasedAt !== undefined && (!TIMESTAMP_PATTERN.test(releasedAt) || Number.isNaN(Date.parse(releasedAt)))) {
    throw new RangeError(`releasedAt ${JSON.stringify(releasedAt)} of ${allocation.address} is not an RFC 3339 UTC timestamp`);
  }
  const who = claim.namespace === undefined ? claim.name : `${claim.namespace}/${claim.name}`;
  return releasedAt === undefined ? who : `${who}@${releasedAt}`;
}

function decodeValue(value: string): { claim: ClaimRef; releasedAt?: string } | undefined {
  const match = VALUE_PATTERN.exec(value);
  if (match === null) return undefined;
  const [, namespace, name, releasedAt] = match;
  if (name === undefined) return undefined;
  if (releasedAt !== undefined && Number.isNaN(Date.parse(releasedAt))) return undefined;
  const claim: ClaimRef = namespace === undefined ? { name } : { namespace, name };
  return releasedAt === undefined ? { claim } : { claim, releasedAt };
}

function compareAddresses(a: Address, b: Address): number {
  if (a.family !== b.family) return a.family - b.family;
  return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
}
