// Just enough address arithmetic for the simulator's rules (VRF ranges, reservations inside them,
// non-overlap) and its address pools. Addresses are bigints so IPv4 and IPv6 share one code path.

export type AddressFamily = 4 | 6;

export interface Cidr {
  readonly family: AddressFamily;
  /** Network address as a number (host bits zero when `isAligned`). */
  readonly network: bigint;
  readonly prefix: number;
}

const BITS: Record<AddressFamily, number> = { 4: 32, 6: 128 };

export function familyBits(family: AddressFamily): number {
  return BITS[family];
}

/** Parses an IPv4 or IPv6 address; undefined when it is not one. */
export function parseAddress(text: string): { family: AddressFamily; value: bigint } | undefined {
  return text.includes(':') ? parseV6(text) : parseV4(text);
}

function parseV4(text: string): { family: 4; value: bigint } | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    value = (value << 8n) | BigInt(n);
  }
  return { family: 4, value };
}

function parseV6(text: string): { family: 6; value: bigint } | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' || halves[0] === undefined ? [] : halves[0].split(':');
  const tail = halves.length === 2 && halves[1] !== '' && halves[1] !== undefined ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  let value = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return { family: 6, value };
}

export function formatAddress(family: AddressFamily, value: bigint): string {
  if (family === 4) {
    return [24n, 16n, 8n, 0n].map((s) => ((value >> s) & 0xffn).toString()).join('.');
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((value >> BigInt(i * 16)) & 0xffffn));
  // RFC 5952: compress the longest run (of two or more) of zero groups.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Parses `a.b.c.d/n` or `x::/n`; the network may have host bits set (see `isAligned`). */
export function parseCidr(text: string): Cidr | undefined {
  const [addr, prefixText, extra] = text.split('/');
  if (addr === undefined || prefixText === undefined || extra !== undefined) return undefined;
  if (!/^\d{1,3}$/.test(prefixText)) return undefined;
  const parsed = parseAddress(addr);
  if (parsed === undefined) return undefined;
  const prefix = Number(prefixText);
  if (prefix > BITS[parsed.family]) return undefined;
  return { family: parsed.family, network: parsed.value, prefix };
}

export function hostMask(family: AddressFamily, prefix: number): bigint {
  return (1n << BigInt(BITS[family] - prefix)) - 1n;
}

/** True when the address has no host bits set for its prefix (10.0.0.0/16, not 10.0.1.0/16). */
export function isAligned(c: Cidr): boolean {
  return (c.network & hostMask(c.family, c.prefix)) === 0n;
}

export function lastAddress(c: Cidr): bigint {
  return c.network | hostMask(c.family, c.prefix);
}

/** Whether `inner` lies entirely inside `outer`. */
export function containsCidr(outer: Cidr, inner: Cidr): boolean {
  if (outer.family !== inner.family || inner.prefix < outer.prefix) return false;
  return inner.network >= outer.network && lastAddress(inner) <= lastAddress(outer);
}

export function overlaps(a: Cidr, b: Cidr): boolean {
  if (a.family !== b.family) return false;
  return a.network <= lastAddress(b) && b.network <= lastAddress(a);
}

export function netmask(family: AddressFamily, prefix: number): string {
  const all = (1n << BigInt(BITS[family])) - 1n;
  return formatAddress(family, all ^ hostMask(family, prefix));
}

export function formatCidr(c: Cidr): string {
  return `${formatAddress(c.family, c.network)}/${c.prefix}`;
}

/**
 * A bump allocator of aligned blocks from one range. It never reuses space: the simulator lives
 * for one test file or one demo, and never reusing makes every address in a log unambiguous.
 */
export class BlockPool {
  private next: bigint;

  /** `offset`: addresses at the start of the range that are never handed out. */
  constructor(
    private readonly range: Cidr,
    offset = 0n,
  ) {
    this.next = range.network + offset;
  }

  /** The next aligned block of the given prefix, or undefined when the range is used up. */
  allocate(prefix: number): Cidr | undefined {
    const size = 1n << BigInt(BITS[this.range.family] - prefix);
    const start = ((this.next + size - 1n) / size) * size;
    const block: Cidr = { family: this.range.family, network: start, prefix };
    if (!containsCidr(this.range, block)) return undefined;
    this.next = start + size;
    return block;
  }
}
