import type { IPPool, PoolVrfStatus } from '@metal-l2/api';
import { isConflict, patchStatusIfChanged, setCondition, type ConditionInput } from '@metal-l2/kube';
import type { IpamContext } from '../context.js';
import { formatPoolRef, poolIndexKey, poolObjectKey, poolTypeOf, type PoolRef } from '../pool-ref.js';

const ATTEMPTS = 5;

export class PoolGoneError extends Error {
  override readonly name = 'PoolGoneError';
  readonly code = 'POOL_GONE';
}

/**
 * Writes a change of status.vrf (and a VRFReady condition, when given) at once, right after the
 * Metal call it records, so that a crash cannot lose an id. Guarded by resourceVersion like every
 * pool status write; a lost race reads the pool again and applies the same change to what it
 * holds then. The write is kept with our others: the passes its own watch event starts must read
 * the record, not the cache's version before it (which would delete a resource again, or list a
 * VRF already gone). Returns the pool as written (or as it was, when nothing changed).
 */
export async function recordVrfStatus(
  ctx: Pick<IpamContext, 'client' | 'now' | 'ownWrites'>,
  input: {
    readonly ref: PoolRef;
    readonly pool: IPPool;
    readonly change: (current: PoolVrfStatus) => PoolVrfStatus;
    readonly condition?: ConditionInput | undefined;
  },
): Promise<IPPool> {
  let pool: IPPool | undefined = input.pool;
  for (let attempt = 0; attempt < ATTEMPTS && pool !== undefined; attempt++) {
    const vrf = input.change(pool.status?.vrf ?? {});
    const conditions =
      input.condition === undefined
        ? pool.status?.conditions
        : setCondition(pool.status?.conditions ?? [], { ...input.condition, ...generationOf(pool) }, ctx.now());
    const after: IPPool = { ...pool, status: { ...pool.status, vrf, ...(conditions === undefined ? {} : { conditions }) } };
    try {
      const written = await patchStatusIfChanged({ client: ctx.client, type: poolTypeOf(input.ref.kind), before: pool, after });
      if (written === undefined) return pool;
      return ctx.ownWrites.pools.remember('', poolIndexKey(input.ref), { basedOn: pool.metadata.resourceVersion, written });
    } catch (err: unknown) {
      if (!isConflict(err)) throw err;
      pool = await ctx.client.get<IPPool>(poolTypeOf(input.ref.kind), poolObjectKey(input.ref));
    }
  }
  if (pool === undefined) throw new PoolGoneError(`${formatPoolRef(input.ref)} was deleted while its Metal resources were recorded`);
  throw new Error(`could not record the Metal resources of ${formatPoolRef(input.ref)}: lost ${ATTEMPTS} status races in a row`);
}

function generationOf(pool: IPPool): { observedGeneration?: number } {
  return pool.metadata.generation === undefined ? {} : { observedGeneration: pool.metadata.generation };
}
