/**
 * From a pool spec to the set of addresses the pool may hand out, with the same rules as the
 * reference in-cluster provider (internal/poolutil `PoolSpecToIPSet` and the pool webhook):
 *
 * - `addresses` entries are an IP, a CIDR (host bits allowed, masked: `10.0.0.1/24` is the /24) or
 *   an `a-b` range split at the first `-`; they may overlap and are merged.
 * - One family per pool; the gateway and `excludedAddresses` must be of that family too.
 * - The pool's subnet is (lowest address of `addresses`)/prefix; every entry must lie inside it.
 *   We also refuse a gateway outside it (the reference accepts one, issue #168); with that rule
 *   the subnet is equally (gateway)/prefix.
 * - Allocatable = addresses − excludedAddresses − reserved − gateway, where reserved is the first
 *   address of the subnet and, for IPv4 only, the last one (network and broadcast; IPv6 has no
 *   broadcast, its first address is the subnet-router anycast address). `allocateReservedIPAddresses`
 *   keeps them; the gateway is never allocatable. Like the reference, a /31 or /32 IPv4 pool (and a
 *   /128 IPv6 one) is therefore empty unless `allocateReservedIPAddresses` is set.
 */
import { addressBits, formatAddress, formatCidr, parseAddress } from './address.js';
import type { Address, IPFamily } from './address.js';
import { IssueCode } from './issues.js';
import type { Issue } from './issues.js';
import {
  countRangeAddresses,
  formatRange,
  normalizeRanges,
  rangeOfPrefix,
  rangesContain,
  rangesContainRange,
  rangesFromValues,
  subtractRanges,
} from './range.js';
import type { AddressRange, RangeSet } from './range.js';

/** The address fields of InClusterIPPool / GlobalInClusterIPPool `spec`, as the user wrote them. */
export interface PoolSpec {
  readonly addresses: readonly string[];
  readonly prefix: number;
  readonly gateway?: string | undefined;
  readonly excludedAddresses?: readonly string[] | undefined;
  readonly allocateReservedIPAddresses?: boolean | undefined;
  /** Validated here (non-negative integer) so the webhook reports every spec problem at once. */
  readonly addressReuseGracePeriodSeconds?: number | undefined;
}

/** A valid pool spec in the form the allocator and the webhook work with. */
export interface ResolvedPool {
  readonly family: IPFamily;
  readonly prefix: number;
  /** (lowest address)/prefix: the subnet every entry and the gateway lie in. */
  readonly subnet: AddressRange;
  readonly gateway?: bigint | undefined;
  /** The union of `addresses`, before anything is removed. */
  readonly addresses: RangeSet;
  /** What may be handed out. */
  readonly allocatable: RangeSet;
}

export type ResolvePoolResult =
  { readonly ok: true; readonly pool: ResolvedPool } | { readonly ok: false; readonly issues: readonly Issue[] };

/** One parsed `addresses` / `excludedAddresses` entry. */
export interface AddressEntry {
  readonly family: IPFamily;
  readonly range: AddressRange;
}

/**
 * Parses one entry: `10.0.0.5`, `10.0.0.0/24` or `10.0.0.5-10.0.0.9`. Returns undefined when it is
 * none of these, when a range mixes families or runs backwards, or when a CIDR's prefix is too long,
 * which are the cases the reference rejects with "not a valid IP, range, nor CIDR".
 */
export function parseAddressEntry(text: string): AddressEntry | undefined {
  const hyphen = text.indexOf('-');
  if (hyphen >= 0) {
    // Split at the first hyphen as netipx.ParseIPRange does: `a-b-c` fails on `b-c`.
    const start = parseAddress(text.slice(0, hyphen));
    const end = parseAddress(text.slice(hyphen + 1));
    if (start === undefined || end === undefined || start.family !== end.family || start.value > end.value) {
      return undefined;
    }
    return { family: start.family, range: { start: start.value, end: end.value } };
  }
  const slash = text.indexOf('/');
  if (slash >= 0) {
    const address = parseAddress(text.slice(0, slash));
    const prefix = parsePrefixLength(text.slice(slash + 1));
    if (address === undefined || prefix === undefined || prefix > addressBits(address.family)) {
      return undefined;
    }
    return { family: address.family, range: rangeOfPrefix(address, prefix) };
  }
  const address = parseAddress(text);
  return address === undefined ? undefined : { family: address.family, range: { start: address.value, end: address.value } };
}

/** Checks a pool spec; an empty list means `resolvePoolSpec` succeeds. */
export function validatePoolSpec(spec: PoolSpec): readonly Issue[] {
  const result = resolvePoolSpec(spec);
  return result.ok ? [] : result.issues;
}

/**
 * Validates a pool spec and computes its allocatable set. Reports every problem it can find in one
 * pass, in the reference webhook's order; the subnet checks run only when everything else is valid,
 * since they need a family and a prefix to mean anything.
 */
export function resolvePoolSpec(spec: PoolSpec): ResolvePoolResult {
  const issues: Issue[] = [];

  if (spec.addresses.length === 0) {
    issues.push({ code: IssueCode.Required, path: ['addresses'], message: 'addresses is required' });
  }
  const prefixIsInteger = Number.isInteger(spec.prefix) && spec.prefix >= 0 && spec.prefix <= 128;
  if (!prefixIsInteger) {
    issues.push({ code: IssueCode.InvalidPrefix, path: ['prefix'], message: 'a valid prefix is required', value: spec.prefix });
  }

  const addresses = parseEntries(spec.addresses, 'addresses', issues);
  const family = singleFamily(addresses);
  if (family === 'mixed') {
    issues.push({ code: IssueCode.MixedFamilies, path: ['addresses'], message: 'provided addresses are of mixed IP families' });
  }

  let gateway: Address | undefined;
  if (spec.gateway !== undefined && spec.gateway !== '') {
    gateway = parseAddress(spec.gateway);
    if (gateway === undefined) {
      issues.push({
        code: IssueCode.InvalidAddress,
        path: ['gateway'],
        message: 'provided gateway is not a valid IP address',
        value: spec.gateway,
      });
    } else if (family !== undefined && family !== 'mixed' && gateway.family !== family) {
      issues.push({
        code: IssueCode.GatewayFamilyMismatch,
        path: ['gateway'],
        message: 'provided gateway and addresses are of mixed IP families',
        value: spec.gateway,
      });
    }
  }

  const excluded = parseEntries(spec.excludedAddresses ?? [], 'excludedAddresses', issues);
  const excludedFamily = singleFamily(excluded);
  if (excludedFamily === 'mixed') {
    issues.push({ code: IssueCode.MixedFamilies, path: ['excludedAddresses'], message: 'provided addresses are of mixed IP families' });
  } else if (excludedFamily !== undefined && family !== undefined && family !== 'mixed' && excludedFamily !== family) {
    issues.push({
      code: IssueCode.ExcludedFamilyMismatch,
      path: ['excludedAddresses'],
      message: 'addresses and excluded addresses are of mixed IP families',
    });
  }

  const grace = spec.addressReuseGracePeriodSeconds;
  if (grace !== undefined && (!Number.isInteger(grace) || grace < 0)) {
    issues.push({
      code: IssueCode.InvalidGracePeriod,
      path: ['addressReuseGracePeriodSeconds'],
      message: 'addressReuseGracePeriodSeconds must be a non-negative integer',
      value: grace,
    });
  }

  if (issues.length > 0 || family === undefined || family === 'mixed') {
    return { ok: false, issues };
  }

  if (spec.prefix > addressBits(family)) {
    issues.push({
      code: IssueCode.InvalidPrefix,
      path: ['prefix'],
      message: `provided prefix is not valid: an IPv${family} prefix is at most ${addressBits(family)}`,
      value: spec.prefix,
    });
    return { ok: false, issues };
  }

  const merged = normalizeRanges(addresses.map((entry) => entry.parsed.range));
  const lowest = (merged[0] as AddressRange).start;
  const subnet = rangeOfPrefix({ family, value: lowest }, spec.prefix);
  const subnetSet: RangeSet = [subnet];
  const subnetText = formatCidr({ family, value: subnet.start }, spec.prefix);
  for (const entry of addresses) {
    if (!rangesContainRange(subnetSet, entry.parsed.range)) {
      issues.push({
        code: IssueCode.OutsidePrefix,
        path: ['addresses', entry.index],
        message: `provided address belongs to a different subnet than others (${subnetText})`,
        value: entry.text,
      });
    }
  }
  if (gateway !== undefined && !rangesContain(subnetSet, gateway.value)) {
    issues.push({
      code: IssueCode.GatewayOutsideSubnet,
      path: ['gateway'],
      message: `gateway is outside the pool's subnet ${subnetText}`,
      value: formatAddress(gateway),
    });
  }
  if (issues.length > 0) {
    return { ok: false, issues };
  }

  const removed: bigint[] = [];
  if (!spec.allocateReservedIPAddresses) {
    removed.push(subnet.start);
    if (family === 4) removed.push(subnet.end);
  }
  if (gateway !== undefined) removed.push(gateway.value);
  const excludedSet = normalizeRanges(excluded.map((entry) => entry.parsed.range));
  const allocatable = subtractRanges(subtractRanges(merged, excludedSet), rangesFromValues(removed));

  return {
    ok: true,
    pool: { family, prefix: spec.prefix, subnet, gateway: gateway?.value, addresses: merged, allocatable },
  };
}

/**
 * The addresses (e.g. those allocated today) that a pool would no longer be able to hold: used by
 * the webhook to refuse shrinking a pool below its allocations, and by status for `outOfRange`.
 */
export function findAddressesOutsidePool(pool: ResolvedPool, addresses: readonly Address[]): Address[] {
  return addresses.filter((address) => address.family !== pool.family || !rangesContain(pool.allocatable, address.value));
}

/** How many addresses the pool can hand out in total. */
export function countAllocatable(pool: ResolvedPool): bigint {
  return countRangeAddresses(pool.allocatable);
}

/** `10.0.0.0/24`: the pool's subnet in CIDR form, for messages and IPAddress objects. */
export function formatSubnet(pool: ResolvedPool): string {
  return formatCidr({ family: pool.family, value: pool.subnet.start }, pool.prefix);
}

/** The allocatable set in pool spec syntax (`10.0.0.2-10.0.0.9`), for messages. */
export function describeAllocatable(pool: ResolvedPool): string[] {
  return pool.allocatable.map((range) => formatRange(pool.family, range));
}

interface ParsedEntry {
  readonly index: number;
  readonly text: string;
  readonly parsed: AddressEntry;
}

function parseEntries(entries: readonly string[], field: string, issues: Issue[]): ParsedEntry[] {
  const parsed: ParsedEntry[] = [];
  entries.forEach((text, index) => {
    const entry = parseAddressEntry(text);
    if (entry === undefined) {
      issues.push({
        code: IssueCode.InvalidAddress,
        path: [field, index],
        message: 'provided address is not a valid IP, range, nor CIDR',
        value: text,
      });
    } else {
      parsed.push({ index, text, parsed: entry });
    }
  });
  return parsed;
}

function singleFamily(entries: readonly ParsedEntry[]): IPFamily | 'mixed' | undefined {
  let family: IPFamily | undefined;
  for (const entry of entries) {
    if (family === undefined) family = entry.parsed.family;
    else if (family !== entry.parsed.family) return 'mixed';
  }
  return family;
}

/** Decimal 0..128 without sign or leading zeros, as netip.ParsePrefix reads the bits after `/`. */
function parsePrefixLength(text: string): number | undefined {
  if (!/^(0|[1-9][0-9]{0,2})$/.test(text)) return undefined;
  return Number(text);
}
