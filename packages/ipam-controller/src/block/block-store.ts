import { IPAddressBlockType, IpamLabels, type IPAddressBlock, type IPPool } from '@metal-l2/api';
import { decodeAllocations, encodeAllocations, type Allocation } from '@metal-l2/ipam-core';
import { apiVersionOf, isAlreadyExists, isConflict, isNotFound, patchStatusIfChanged } from '@metal-l2/kube';
import { IndexNames, type IpamContext } from '../context.js';
import { forEachBounded } from '../parallel.js';
import type { PoolRef } from '../pool-ref.js';
import { blockCidr, groupByBlock, type BlockLayout } from './block-layout.js';

// The blocks of one pool as a pass sees them, and the writes that bring them to a plan: one
// status patch per changed block, each guarded by that block's resourceVersion, so two writers
// can never hand out the same address (the loser re-reads the block and decides again). A
// commit's size is what changed in its blocks, whatever the pool's fill.

/** A pool's blocks by name. */
export type BlockSet = ReadonlyMap<string, IPAddressBlock>;

/** The pool's blocks as the cache has them, or as we wrote them when the cache has not caught up yet. */
export function cachedBlocks(ctx: Pick<IpamContext, 'caches' | 'ownWrites'>, pool: IPPool): Map<string, IPAddressBlock> {
  const uid = pool.metadata.uid ?? '';
  const own = ctx.ownWrites.blocks;
  const blocks = new Map<string, IPAddressBlock>();
  for (const cached of ctx.caches.blocks.byIndex(IndexNames.byPoolUid, uid)) {
    const name = cached.metadata.name ?? '';
    const block = own.fresher(uid, name, cached);
    if (block !== undefined) blocks.set(name, block);
  }
  for (const block of own.unseen(uid, new Set(blocks.keys()))) blocks.set(block.metadata.name ?? '', block);
  return blocks;
}

/**
 * Everything a pool holds as the caches see it: its blocks' allocations and, for a pool not yet
 * moved to blocks, its status's (an address is in one or the other while it moves; blocks win).
 */
export function poolAllocations(ctx: Pick<IpamContext, 'caches' | 'ownWrites'>, pool: IPPool): Allocation[] {
  const inBlocks = allocationsOfBlocks(cachedBlocks(ctx, pool));
  if (pool.status?.allocations === undefined) return inBlocks;
  const held = new Set(inBlocks.map((a) => a.address));
  return [...inBlocks, ...decodeAllocations(pool.status.allocations).allocations.filter((a) => !held.has(a.address))];
}

// Decoding grows with the pool's fill: done once per block version (the cache hands out a new
// object on every change). Each decoded entry remembers its block, so a commit finds what changed
// without parsing the addresses of what did not.
const decoded = new WeakMap<IPAddressBlock, readonly Allocation[]>();
const homeBlock = new WeakMap<Allocation, string>();

export function blockAllocations(block: IPAddressBlock): readonly Allocation[] {
  let allocations = decoded.get(block);
  if (allocations === undefined) {
    allocations = decodeAllocations(block.status?.allocations ?? {}).allocations;
    decoded.set(block, allocations);
    const name = block.metadata.name ?? '';
    for (const a of allocations) homeBlock.set(a, name);
  }
  return allocations;
}

/** Every allocation the blocks hold. */
export function allocationsOfBlocks(blocks: BlockSet): Allocation[] {
  const all: Allocation[] = [];
  for (const block of blocks.values()) for (const a of blockAllocations(block)) all.push(a);
  return all;
}

export type BlockCommit = (
  | { readonly kind: 'written'; readonly blocks: BlockSet; readonly writes: number }
  /** A block changed under us (or was created by another writer): `blocks` has it as it is now. */
  | { readonly kind: 'conflict'; readonly blocks: BlockSet }
) & {
  /** The allocations of the blocks this call wrote: committed, even when another block lost a race. */
  readonly committed: readonly Allocation[];
};

/**
 * Writes every block whose allocations differ from `allocations` (created first when missing).
 * Blocks that were written are in the answer as the server returned them; on a conflict the
 * block that lost is read again, and the caller decides again from the blocks answered.
 */
export async function commitBlocks(
  ctx: IpamContext,
  input: {
    readonly ref: PoolRef;
    readonly pool: IPPool;
    readonly layout: BlockLayout;
    readonly blocks: BlockSet;
    readonly allocations: readonly Allocation[];
  },
): Promise<BlockCommit> {
  const { pool, layout } = input;
  const uid = pool.metadata.uid ?? '';
  const own = ctx.ownWrites.blocks;
  const changed = changedBlocks(input);
  if (changed.length === 0) return { kind: 'written', blocks: input.blocks, writes: 0, committed: [] };

  const blocks = new Map(input.blocks);
  let conflict = false;
  const committed: Allocation[] = [];
  await forEachBounded(changed, ctx.writeConcurrency, async ({ name, group }) => {
    const allocations = group?.allocations ?? [];
    let block = blocks.get(name);
    let creating = false;
    try {
      if (block === undefined) {
        if (group === undefined) return;
        creating = true;
        const created = await createBlock(ctx, { ref: input.ref, pool, layout, name, index: group.index, family: group.family });
        creating = false;
        block = own.remember(uid, name, { basedOn: undefined, written: created });
        blocks.set(name, block);
      }
      const status = { allocations: encodeAllocations(allocations), used: allocations.length };
      const written = await patchStatusIfChanged({
        client: ctx.client,
        type: IPAddressBlockType,
        before: { ...block, status: { allocations: block.status?.allocations ?? {}, used: block.status?.used ?? 0 } },
        after: { ...block, status },
      });
      if (written !== undefined) blocks.set(name, own.remember(uid, name, { basedOn: block.metadata.resourceVersion, written }));
      committed.push(...allocations);
    } catch (err: unknown) {
      // A patch's NotFound: a block we wrote (and the cache never showed) was deleted since.
      if (!isConflict(err) && !isAlreadyExists(err) && !(isNotFound(err) && !creating)) throw err;
      conflict = true;
      own.forget(uid, name);
      ctx.metrics?.commitConflicts.inc({ kind: input.ref.kind });
      const live = await readBlock(ctx, layout.namespace, name);
      if (live === undefined) blocks.delete(name);
      else blocks.set(name, live);
    }
  });
  return conflict ? { kind: 'conflict', blocks, committed } : { kind: 'written', blocks, writes: changed.length, committed };
}

/**
 * The block as the API server has it now. Read as a list of one (by name), the verb the cache
 * already needs: a live read of a block happens only after a lost race, too rarely for a `get`
 * grant of its own to be exercised and kept honest.
 */
async function readBlock(ctx: IpamContext, namespace: string, name: string): Promise<IPAddressBlock | undefined> {
  const found = await ctx.client.list<IPAddressBlock>(IPAddressBlockType, { namespace, fieldSelector: `metadata.name=${name}` });
  return found.items[0];
}

type BlockGroup = { index: bigint; family: 4 | 6; allocations: Allocation[] };

/**
 * The blocks whose allocations differ from `allocations`, each with all of its allocations
 * (`group` undefined: the block is to be emptied). An entry the blocks decoded is where it was;
 * only new entries (new allocations, release marks) have their address parsed for their block.
 */
function changedBlocks(input: {
  readonly pool: IPPool;
  readonly layout: BlockLayout;
  readonly blocks: BlockSet;
  readonly allocations: readonly Allocation[];
}): { name: string; group: BlockGroup | undefined }[] {
  const kept = new Map<string, number>();
  const fresh: Allocation[] = [];
  for (const a of input.allocations) {
    const home = homeBlock.get(a);
    if (home !== undefined && input.blocks.has(home)) kept.set(home, (kept.get(home) ?? 0) + 1);
    else fresh.push(a);
  }
  const freshGroups = groupByBlock(fresh, { poolUid: input.pool.metadata.uid ?? '', size: input.layout.size });
  const changed = new Set(freshGroups.keys());
  for (const [name, block] of input.blocks) if ((kept.get(name) ?? 0) !== blockAllocations(block).length) changed.add(name);
  if (changed.size === 0) return [];
  const groups = new Map<string, BlockGroup>(freshGroups);
  for (const a of input.allocations) {
    const home = homeBlock.get(a);
    if (home === undefined || !changed.has(home) || !input.blocks.has(home)) continue;
    let group = groups.get(home);
    if (group === undefined) {
      group = { index: 0n, family: 4, allocations: [] };
      groups.set(home, group);
    }
    group.allocations.push(a);
  }
  return [...changed].map((name) => ({ name, group: groups.get(name) }));
}

async function createBlock(
  ctx: IpamContext,
  input: { ref: PoolRef; pool: IPPool; layout: BlockLayout; name: string; index: bigint; family: 4 | 6 },
): Promise<IPAddressBlock> {
  const { ref, pool } = input;
  const poolUid = pool.metadata.uid ?? '';
  return ctx.client.create<IPAddressBlock>(IPAddressBlockType, {
    metadata: {
      name: input.name,
      namespace: input.layout.namespace,
      labels: { [IpamLabels.poolUid]: poolUid },
      ownerReferences: [
        {
          // Pools and blocks share group and version.
          apiVersion: apiVersionOf(IPAddressBlockType),
          kind: ref.kind,
          name: ref.name,
          uid: poolUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      poolRef: { kind: ref.kind, name: ref.name, ...(ref.namespace === undefined ? {} : { namespace: ref.namespace }), uid: poolUid },
      cidr: blockCidr(input.family, input.index, input.layout.size),
    },
  });
}
