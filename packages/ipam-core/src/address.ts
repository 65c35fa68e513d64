/**
 * IP addresses as (family, bigint) pairs: bigint makes range arithmetic the same for IPv4 and IPv6.
 * Parsing and formatting go through ipaddr.js; this module only adds the strictness that Go's
 * `net/netip` applies (the reference provider and the CAPI IPAddress webhook parse with it), so a
 * value we accept is a value they accept, and vice versa.
 */
import ipaddr from 'ipaddr.js';

export type IPFamily = 4 | 6;

export interface Address {
  readonly family: IPFamily;
  /** The address as an unsigned integer: 0 .. 2^32-1 for IPv4, 0 .. 2^128-1 for IPv6. */
  readonly value: bigint;
}

/** Number of bits of an address of this family. */
export function addressBits(family: IPFamily): 32 | 128 {
  return family === 4 ? 32 : 128;
}

/** The highest address of a family (255.255.255.255 or ffff:...:ffff) as an integer. */
export function maxAddressValue(family: IPFamily): bigint {
  return family === 4 ? MAX_V4 : MAX_V6;
}

const MAX_V4 = (1n << 32n) - 1n;
const MAX_V6 = (1n << 128n) - 1n;
const V4_MAPPED_PREFIX = 0xffffn << 32n;

// Go's netip accepts only hex digits, colons and an optional dotted IPv4 tail in an IPv6 address.
// Zones (`%eth0`) are refused on purpose: a pool entry or an IPAddress with a zone names no address
// another machine can use, and netip.ParsePrefix refuses them too.
const IPV6_CHARACTERS = /^[0-9A-Fa-f:.]+$/;

/**
 * Parses one IP address (no prefix, no zone). Accepts exactly what Go's netip.ParseAddr accepts
 * apart from zones: dotted-quad IPv4 without leading zeros, IPv6 in any RFC 4291 text form including
 * an embedded dotted IPv4 tail. IPv4-mapped IPv6 (`::ffff:10.0.0.1`) stays IPv6, as in netip.
 * Returns undefined for anything else.
 */
export function parseAddress(text: string): Address | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) {
    return { family: 4, value: v4ToBigInt(ipaddr.IPv4.parse(text).octets) };
  }
  if (!text.includes(':') || !IPV6_CHARACTERS.test(text)) {
    return undefined;
  }
  const hexOnly = replaceDottedTail(text);
  if (hexOnly === undefined || !ipaddr.IPv6.isValid(hexOnly)) {
    return undefined;
  }
  return { family: 6, value: v6ToBigInt(ipaddr.IPv6.parse(hexOnly).parts) };
}

/**
 * The canonical text of an address, the same as Go's netip.Addr.String(): dotted quad for IPv4,
 * RFC 5952 for IPv6 (lower case, longest zero run compressed), and `::ffff:a.b.c.d` for
 * IPv4-mapped IPv6. Used for IPAddress.spec.address and as the status key, so one address always
 * has one spelling.
 */
export function formatAddress(address: Address): string {
  if (address.family === 4) {
    return new ipaddr.IPv4(v4Octets(address.value)).toString();
  }
  if (address.value >> 32n === 0xffffn) {
    // RFC 5952 §5 (and netip) write the IPv4 part of a mapped address in dotted form.
    const v4 = new ipaddr.IPv4(v4Octets(address.value - V4_MAPPED_PREFIX)).toString();
    return `::ffff:${v4}`;
  }
  return new ipaddr.IPv6(v6Parts(address.value)).toRFC5952String();
}

/** Parses and re-formats: the canonical spelling of `text`, or undefined when it is no address. */
export function normalizeAddress(text: string): string | undefined {
  const address = parseAddress(text);
  return address === undefined ? undefined : formatAddress(address);
}

/** `10.0.0.0/24`: the address as given (callers pass the network address) and the prefix length. */
export function formatCidr(address: Address, prefix: number): string {
  return `${formatAddress(address)}/${prefix}`;
}

/**
 * ipaddr.js rewrites `::a.b.c.d` to `::ffff:a.b.c.d` (a deprecated reading) and accepts octal or
 * hex IPv4 parts; netip does neither. Turning a dotted tail into two hex groups first keeps
 * ipaddr.js as the parser while giving the netip reading.
 */
function replaceDottedTail(text: string): string | undefined {
  if (!text.includes('.')) {
    return text;
  }
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (!ipaddr.IPv4.isValidFourPartDecimal(tail)) {
    return undefined;
  }
  const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(tail).octets;
  const high = ((a << 8) | b).toString(16);
  const low = ((c << 8) | d).toString(16);
  return `${text.slice(0, lastColon + 1)}${high}:${low}`;
}

function v4ToBigInt(octets: readonly number[]): bigint {
  let value = 0;
  for (const octet of octets) {
    value = value * 256 + octet;
  }
  return BigInt(value);
}

function v6ToBigInt(parts: readonly number[]): bigint {
  let value = 0n;
  for (const part of parts) {
    value = (value << 16n) | BigInt(part);
  }
  return value;
}

function v4Octets(value: bigint): number[] {
  const n = Number(value);
  return [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}

function v6Parts(value: bigint): number[] {
  const parts = new Array<number>(8);
  let rest = value;
  for (let i = 7; i >= 0; i--) {
    parts[i] = Number(rest & 0xffffn);
    rest >>= 16n;
  }
  return parts;
}
