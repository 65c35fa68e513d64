import type { IPPool } from '@metal-l2/api';
import type { ResolvedPool } from '@metal-l2/ipam-core';
import type { IpamContext } from '../context.js';
import { reconcileVrf, reservedAddressesOf, type VrfEvent } from '../vrf/index.js';
import { formatPoolRef, type PoolRef } from '../pool-ref.js';
import { poolAllocations } from '../block/block-store.js';
import type { VrfView } from './pool-scope.js';

/**
 * The seam between a live pool's reconcile and the VRF steps: runs them for a pool with spec.vrf
 * (a deleting pool keeps status.vrf as it is, pool-deletion.ts), and turns what they report into
 * Events and log lines here, in the runtime, not in the steps.
 */
export async function observeVrf(
  ctx: IpamContext,
  input: { readonly ref: PoolRef; readonly pool: IPPool; readonly resolved: ResolvedPool | undefined },
): Promise<{ pool: IPPool; view: VrfView | undefined }> {
  const { ref, pool } = input;
  const recorded = pool.status?.vrf;
  if (pool.spec.vrf === undefined) {
    // A pool whose spec.vrf was removed (the webhook refuses that once Metal resources exist)
    // keeps the record of what it created, so that nobody loses track of it.
    if ((recorded?.created ?? []).length === 0) return { pool, view: undefined };
    return { pool, view: { write: 'keep', ready: true, message: '', reservedAddresses: reservedAddressesOf(recorded) } };
  }
  const allocated = new Set(poolAllocations(ctx, pool).map((a) => a.address));
  const outcome = await reconcileVrf(ctx, { ref, pool, resolved: input.resolved, allocated });
  report(ctx, { ref, pool: outcome.pool, events: outcome.events });
  if (!outcome.ready) {
    ctx.logger.debug('VRF side not ready', {
      pool: formatPoolRef(ref),
      reason: outcome.condition.reason,
      message: outcome.condition.message,
    });
  }
  return {
    pool: outcome.pool,
    view: {
      write: { condition: outcome.condition },
      gatewayAddress: outcome.status.gatewayAddress,
      ready: outcome.ready,
      message: outcome.ready ? '' : `${outcome.condition.reason}: ${outcome.condition.message}`,
      reservedAddresses: outcome.reservedAddresses,
      requeueAfterMs: outcome.requeueAfterMs,
    },
  };
}

/** Events for people (kubectl describe) and one log line each for operators. */
export function report(
  ctx: Pick<IpamContext, 'events' | 'logger'>,
  input: { readonly ref: PoolRef; readonly pool: IPPool; readonly events: readonly VrfEvent[] },
): void {
  for (const event of input.events) {
    ctx.events.event(input.pool, event);
    const fields = { pool: formatPoolRef(input.ref), reason: event.reason, message: event.message };
    if (event.type === 'Warning') ctx.logger.warn('metal side of pool changed unexpectedly', fields);
    else ctx.logger.info('metal side of pool changed', fields);
  }
}
