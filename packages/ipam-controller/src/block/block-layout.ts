import { addressBits, formatCidr, parseAddress, type Allocation, type IPFamily } from '@metal-l2/ipam-core';

// Where an allocation lives: the block of its address. Blocks are aligned on their size in the
// whole address space (not on the pool's range), so an address's block depends on the address
// and the block size alone, never on the pool's spec (which may change).

/** Addresses per block by default: 1,024 (a /22 of IPv4). */
export const DEFAULT_BLOCK_SIZE = 1_024;

/**
 * The largest block size: a full block must fit the object budget with the longest entries
 * (IPv6 address, 253-character claim name, a global pool's namespace, a release mark), see
 * maxBlockSizeFor.
 */
export const MAX_BLOCK_SIZE = 2_048;

/**
 * Bytes one allocation costs in a block object at most: its status entry (IPv6 address of 39
 * characters, `<63-character namespace>/<253-character name>@<timestamp>`, JSON quoting) and its
 * managedFields key (`"f:<address>":{},`).
 */
export const WORST_ENTRY_BYTES = 39 + 3 + 63 + 1 + 253 + 21 + 3 + (39 + 8);

/** The block object besides its allocations (metadata, spec, managedFields' own entry). */
export const BLOCK_OVERHEAD_BYTES = 4_096;

/** The largest power of two whose full block of worst-case entries stays under `budgetBytes`. */
export function maxBlockSizeFor(budgetBytes: number): number {
  let size = 1;
  while (size * 2 <= MAX_BLOCK_SIZE && BLOCK_OVERHEAD_BYTES + size * 2 * WORST_ENTRY_BYTES <= budgetBytes) size *= 2;
  return size;
}

export function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && (n & (n - 1)) === 0;
}

/** How a pool's range is cut into blocks: their size (a power of two) and where they live. */
export interface BlockLayout {
  readonly size: number;
  readonly namespace: string;
}

function log2(size: number): bigint {
  return BigInt(Math.round(Math.log2(size)));
}

/** The block index of an address value: its position in the address space, in blocks. */
export function blockIndexOf(value: bigint, size: number): bigint {
  return value >> log2(size);
}

/** The block's name: deterministic, so two writers creating the same block race and one wins. */
export function blockName(poolUid: string, index: bigint): string {
  return `${poolUid}-${index.toString()}`;
}

/** The block's range as a CIDR: its size, aligned, within the family's address space. */
export function blockCidr(family: IPFamily, index: bigint, size: number): string {
  const bits = log2(size);
  const prefix = addressBits(family) - Number(bits);
  return formatCidr({ family, value: index << bits }, Math.max(0, prefix));
}

/** Allocations by the name of the block that owns their address. */
export function groupByBlock(
  allocations: readonly Allocation[],
  input: { readonly poolUid: string; readonly size: number },
): Map<string, { index: bigint; family: IPFamily; allocations: Allocation[] }> {
  const groups = new Map<string, { index: bigint; family: IPFamily; allocations: Allocation[] }>();
  for (const allocation of allocations) {
    const address = parseAddress(allocation.address);
    if (address === undefined) continue;
    const index = blockIndexOf(address.value, input.size);
    const name = blockName(input.poolUid, index);
    let group = groups.get(name);
    if (group === undefined) {
      group = { index, family: address.family, allocations: [] };
      groups.set(name, group);
    }
    group.allocations.push(allocation);
  }
  return groups;
}
