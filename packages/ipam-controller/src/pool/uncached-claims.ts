import type { IPAddress, IPAddressClaim } from '@metal-l2/api';
import { ByClaim, poolOfClaim, viewClaim, type ClaimView } from '../claim/claim-contract.js';
import type { IpamContext } from '../context.js';
import { forEachBounded } from '../parallel.js';
import { poolIndexKey } from '../pool-ref.js';
import type { PoolScope } from './pool-scope.js';

// A stale cache must never decide that a claim is gone (DESIGN §3.1). An allocation or an
// IPAddress whose claim the cache lacks is either a claim that was deleted or one this replica has
// not seen yet (its claims watch lags, it just became leader): only the API server can tell.

/** What the API server says about the claims the cache lacks, for one pass over a pool. */
export interface UncachedClaims {
  /** Claims of this pool the cache lacks but the API server has: their allocations are kept. */
  readonly live: readonly ClaimView[];
  /** IPAddresses of this pool whose claim is confirmed gone (absent, or another object by UID): to delete. */
  readonly orphanAddresses: readonly IPAddress[];
  /**
   * IPAddresses of a global pool whose claim left without being released (its finalizer removed,
   * the IPAddress not deleted): what clusterctl move leaves in the source, since the pool, which
   * it does not delete, co-owns them. Kept, with their allocations, as the record of the addresses
   * the moved machines hold; deleting one (kubectl delete ipaddress) releases its address.
   */
  readonly left: readonly IPAddress[];
}

const addressClaimKey = (address: IPAddress): string => `${address.metadata.namespace ?? ''}/${address.spec.claimRef.name}`;

/**
 * Reads, live, every claim that status or an IPAddress of the pool names but the cache lacks.
 * Costs nothing while the cache and status agree: only missing claims are read. Claims of other
 * namespaces than the watched one are not ours to judge (and never released by the plan).
 */
export async function confirmUncachedClaims(ctx: IpamContext, scope: PoolScope): Promise<UncachedClaims> {
  // By namespace and name: every allocation and IPAddress of the pool is looked up each pass.
  const known = new ByClaim<true>();
  for (const c of scope.claims) known.set(c.namespace, c.name, true);
  const isKnown = (address: IPAddress): boolean => known.has(address.metadata.namespace ?? '', address.spec.claimRef.name);
  const keepsLeft = scope.ref.namespace === undefined && scope.pool.metadata.deletionTimestamp === undefined;
  // Confirmed before: a claim's UID, once gone, never comes back. Read no more.
  const knownLeft = keepsLeft
    ? scope.addresses.filter(
        (a) => !isKnown(a) && a.metadata.deletionTimestamp === undefined && ctx.leftAddresses.has(a.metadata.uid ?? ''),
      )
    : [];
  for (const a of knownLeft) known.set(a.metadata.namespace ?? '', a.spec.claimRef.name, true);
  const missing = new Map<string, { namespace: string; name: string }>();
  const note = (namespace: string, name: string): void => {
    if (known.has(namespace, name) || (ctx.watchNamespace !== undefined && namespace !== ctx.watchNamespace)) return;
    missing.set(`${namespace}/${name}`, { namespace, name });
  };
  for (const allocation of scope.allocations) {
    if (allocation.releasedAt === undefined) note(allocation.claim.namespace ?? scope.ref.namespace ?? '', allocation.claim.name);
  }
  for (const address of scope.addresses) note(address.metadata.namespace ?? '', address.spec.claimRef.name);
  if (missing.size === 0) return { live: [], orphanAddresses: [], left: knownLeft };

  const live = await readMissingClaims(ctx, scope, missing);
  const orphans = scope.addresses.filter((address) => {
    if (isKnown(address)) return false;
    const claim = live.get(addressClaimKey(address));
    if (claim === undefined) return true;
    // Same name, another object: the claim this IPAddress was made for is gone.
    const owner = address.metadata.ownerReferences?.find((o) => o.kind === 'IPAddressClaim' && o.controller === true);
    return owner !== undefined && owner.uid !== claim.uid;
  });
  const left = new Set(keepsLeft ? orphans.filter((a) => a.metadata.deletionTimestamp === undefined) : []);
  if (left.size > 0) noteLeft(ctx, scope, [...left]);
  return { live: [...live.values()], orphanAddresses: orphans.filter((a) => !left.has(a)), left: [...knownLeft, ...left] };
}

/** The claims the cache lacks that the API server has, and that still ask this pool. */
async function readMissingClaims(
  ctx: IpamContext,
  scope: PoolScope,
  missing: ReadonlyMap<string, { namespace: string; name: string }>,
): Promise<Map<string, ClaimView>> {
  const live = new Map<string, ClaimView>();
  await forEachBounded([...missing.entries()], ctx.writeConcurrency, async ([key, claimKey]) => {
    const claim = await ctx.client.get<IPAddressClaim>(ctx.claimType, claimKey);
    if (claim === undefined) return;
    const view = viewClaim(claim);
    const pool = poolOfClaim(view);
    // A claim of that name that now asks another pool is not this pool's: what it held here is free.
    if (pool !== undefined && poolIndexKey(pool) === poolIndexKey(scope.ref)) live.set(key, view);
  });
  if (live.size > 0) {
    ctx.logger.info('claims missing from the cache exist; keeping their addresses', {
      pool: poolIndexKey(scope.ref),
      claims: [...live.keys()].slice(0, 10),
    });
  }
  return live;
}

/** Remembers IPAddresses newly found left (not read again), and says so once. */
function noteLeft(ctx: IpamContext, scope: PoolScope, left: readonly IPAddress[]): void {
  for (const a of left) ctx.leftAddresses.add(a.metadata.uid ?? '');
  ctx.logger.info('claims left without being released (clusterctl move); keeping their addresses', {
    pool: poolIndexKey(scope.ref),
    claims: left.slice(0, 10).map(addressClaimKey),
  });
}
