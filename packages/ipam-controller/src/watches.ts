import {
  IpamFinalizers,
  IpamLabels,
  type Cluster,
  type IPAddress,
  type IPAddressBlock,
  type IPAddressClaim,
  type IPPool,
  type PoolKind,
} from '@metal-l2/api';
import { jsonEqual, objectPatch, type CacheEvent, type Informer, type ObjectKey } from '@metal-l2/kube';
import { addressWriteKey } from './claim/claim-writes.js';
import { poolOfAddress, poolOfClaim, viewClaim } from './claim/claim-contract.js';
import { IndexNames, type IpamContext } from './context.js';
import { poolIndexKey, poolObjectKey, type PoolRef } from './pool-ref.js';

// Watches, declared as data: which events of which kind wake which pool. One pool controller per
// pool kind; every mapping here is filtered by that kind.

/** Indexes the reconciler reads: claims and IPAddresses by pool, claims by Cluster. */
export function addIndexes(informers: {
  claims: Informer<IPAddressClaim>;
  addresses: Informer<IPAddress>;
  blocks: Informer<IPAddressBlock>;
}): void {
  informers.blocks.addIndex(IndexNames.byPoolUid, (block) => {
    const uid = block.metadata.labels?.[IpamLabels.poolUid];
    return uid === undefined ? [] : [uid];
  });
  informers.claims.addIndex(IndexNames.byPool, (claim) => {
    const view = viewClaim(claim);
    const pool = poolOfClaim(view);
    return pool === undefined ? [] : [poolIndexKey(pool)];
  });
  informers.claims.addIndex(IndexNames.byCluster, (claim) => {
    const view = viewClaim(claim);
    return view.clusterName === undefined ? [] : [`${view.namespace}/${view.clusterName}`];
  });
  informers.addresses.addIndex(IndexNames.byPool, (address) => {
    const pool = poolOfAddress(address);
    return pool === undefined ? [] : [poolIndexKey(pool)];
  });
}

export interface PoolWatches {
  readonly claims: (claim: IPAddressClaim) => ObjectKey[];
  readonly addresses: (address: IPAddress) => ObjectKey[];
  readonly clusters: (cluster: Cluster) => ObjectKey[];
  readonly blocks: (block: IPAddressBlock) => ObjectKey[];
}

/** For the controller of one pool kind: the pool keys an event on each watched kind maps to. */
export function poolWatches(kind: PoolKind, claims: Informer<IPAddressClaim>): PoolWatches {
  const forKind = (pool: PoolRef | undefined): ObjectKey[] => (pool !== undefined && pool.kind === kind ? [poolObjectKey(pool)] : []);
  return {
    claims: (claim) => forKind(poolOfClaim(viewClaim(claim))),
    addresses: (address) => forKind(poolOfAddress(address)),
    blocks: (block) => {
      const ref = block.spec.poolRef;
      return forKind({ kind: ref.kind, name: ref.name, ...(ref.namespace === undefined ? {} : { namespace: ref.namespace }) });
    },
    clusters: (cluster) => {
      const keys = new Map<string, ObjectKey>();
      const value = `${cluster.metadata.namespace ?? ''}/${cluster.metadata.name ?? ''}`;
      for (const claim of claims.byIndex(IndexNames.byCluster, value)) {
        for (const key of forKind(poolOfClaim(viewClaim(claim)))) keys.set(`${key.namespace ?? ''}/${key.name}`, key);
      }
      return [...keys.values()];
    },
  };
}

/**
 * Events that are our own writes coming back: a claim version our finalizer or status patch
 * produced (or one that arrives while such a patch is in flight and changes nothing else), an
 * IPAddress as we created it, a pool status as the pass's status write sent it. The pass that
 * wrote them knew all they say, so they wake no pass; without this each claim bound woke up to
 * three more passes over the whole pool (20 claims bound one by one: 51 passes, now 20 and the
 * held-back count writes).
 */
export function ownWriteEcho(own: IpamContext['ownWrites']): {
  readonly claims: (event: CacheEvent<IPAddressClaim>) => boolean;
  readonly addresses: (event: CacheEvent<IPAddress>) => boolean;
  readonly poolStatus: (key: string, before: IPPool, after: IPPool) => boolean;
} {
  return {
    // The map lookup first: most claim updates are not ours, and those skip the comparison.
    claims: (event) =>
      event.type === 'update' &&
      own.claims.isEcho('', event.object.metadata.uid ?? '', event.object.metadata.resourceVersion) &&
      onlyOurFieldsChanged(event.oldObject, event.object),
    addresses: (event) =>
      event.type === 'add' && own.addresses.isEcho('', addressWriteKey(event.object.metadata), event.object.metadata.resourceVersion),
    // By content, not version: the pool's other status writes (the VRF record, the block layout)
    // must wake the passes that read them. An update that changed nothing but status, to exactly
    // what the last pass sent (guarded by the version it replaced, so the server holds that status
    // and nothing merged into it), whether it comes before the write's answer or after.
    poolStatus: (key, before, after) => {
      const sent = own.pools.lastSent('', key);
      return (
        sent !== undefined &&
        before.metadata.deletionTimestamp === after.metadata.deletionTimestamp &&
        objectPatch(before, after) === undefined &&
        jsonEqual(after.status, sent.status)
      );
    },
  };
}

/**
 * What our claim writes touch is our finalizer and status; anything else changed (another
 * controller's finalizer too: its removal may let the address go) is someone else's news.
 */
function onlyOurFieldsChanged(before: IPAddressClaim, after: IPAddressClaim): boolean {
  const rest = (c: IPAddressClaim): string =>
    JSON.stringify([
      c.spec,
      c.metadata.labels,
      c.metadata.annotations,
      c.metadata.deletionTimestamp,
      c.metadata.ownerReferences,
      // A claim with no finalizer and one with only ours differ by ours alone.
      (c.metadata.finalizers ?? []).filter((f) => f !== IpamFinalizers.releaseAddress),
    ]);
  return rest(before) === rest(after);
}

export type PoolInformers = Readonly<Record<PoolKind, Informer<IPPool>>>;
