import type { CapiIpamVersion, Cluster, IPAddress, IPAddressBlock, IPAddressClaim, IPPool, PoolKind, ResourceType } from '@metal-l2/api';
import type { KubeClient, Logger, ObjectKey, ReconcileContext } from '@metal-l2/kube';
import type { OwnWrites } from '@metal-l2/kube';
import type { CountWrites } from './pool/count-writes.js';
import type { IpamMetrics } from './ipam-metrics.js';
import type { PoolSizes } from './pool/pool-size.js';
import type { VrfRuntime } from './vrf/vrf-runtime.js';

/** The read side the reconcilers use: the informer caches, with the indexes declared in watches.ts. */
export interface ObjectCache<T> {
  /** By key, or by its keyString (`namespace/name`): a key string kept with a view saves building one per pass. */
  get(key: ObjectKey | string): T | undefined;
  list(): T[];
  byIndex(name: string, value: string): T[];
}

export interface IpamCaches {
  readonly pools: Readonly<Record<PoolKind, ObjectCache<IPPool>>>;
  readonly claims: ObjectCache<IPAddressClaim>;
  readonly addresses: ObjectCache<IPAddress>;
  /** Every pool's IPAddressBlocks (all namespaces: a global pool's live in the controller's). */
  readonly blocks: ObjectCache<IPAddressBlock>;
  /** Absent when the server serves no CAPI Cluster kind: then no claim can name a cluster that exists. */
  readonly clusters?: ObjectCache<Cluster> | undefined;
}

export interface EventSink {
  event(
    obj: { apiVersion?: string; kind?: string; metadata: { name?: string; namespace?: string; uid?: string } },
    event: { type: 'Normal' | 'Warning'; reason: string; message: string },
  ): void;
}

/**
 * Everything the IPAM reconcilers need from outside, handed in by main.ts (or a test). A reconcile
 * works with its own copy (inReconcile): the same parts, bound to that reconcile.
 */
export interface IpamContext {
  /** Inside a reconcile, bound to its signal: every call is cancelled on shutdown or lost leadership. */
  readonly client: KubeClient;
  readonly version: CapiIpamVersion;
  readonly claimType: ResourceType;
  readonly addressType: ResourceType;
  readonly caches: IpamCaches;
  readonly events: EventSink;
  /** Inside a reconcile, the reconcile's: its lines carry the pool and the reconcileID. */
  readonly logger: Logger;
  readonly now: () => Date;
  /** Set when the controller watches one namespace only (`--namespace`). */
  readonly watchNamespace?: string | undefined;
  /** How many claim/IPAddress writes one pool reconcile runs at once. */
  readonly writeConcurrency: number;
  /**
   * Our own writes over the lagging cache (kube's OwnWrites): the pools (by poolIndexKey) and blocks
   * (by pool UID) as we wrote them last, the claims' finalizer and status writes (by UID) and the
   * IPAddresses we created (by addressWriteKey), so a pass does not send them again or wake on
   * their echoes.
   */
  readonly ownWrites: {
    readonly pools: OwnWrites<IPPool>;
    readonly blocks: OwnWrites<IPAddressBlock>;
    readonly claims: OwnWrites<IPAddressClaim>;
    readonly addresses: OwnWrites<IPAddress>;
  };
  /** When each pool's counts were last written: they follow the blocks within a bounded lag. */
  readonly countWrites: CountWrites;
  readonly metrics?: IpamMetrics | undefined;
  /** Metal clients, memory and timing of the VRF steps (pools with spec.vrf). */
  readonly vrf: VrfRuntime;
  /** The pool object's size budget, and what was measured of pools' objects. */
  readonly statusBudget: PoolSizes;
  /** How new pools cut their range into IPAddressBlocks (a pool keeps the layout its status records). */
  readonly blocks: { readonly size: number; readonly globalNamespace: string };
  /**
   * This management cluster's kube-system Namespace UID, whatever --cluster-identity says (that one
   * may be shared across a move on purpose): the stamp on the pools it allocates from (pool-ownership.ts).
   */
  readonly managementCluster: string;
  /**
   * UIDs of global pools' IPAddresses whose claim the API server confirmed gone (it left
   * unreleased: uncached-claims.ts). A UID never comes back, so they are not read again each pass.
   */
  readonly leftAddresses: Set<string>;
}

export const IndexNames = {
  /** claims and IPAddresses by the pool they reference (poolIndexKey). */
  byPool: 'byPool',
  /** claims by `namespace/clusterName`. */
  byCluster: 'byCluster',
  /** IPAddressBlocks by the UID of their pool. */
  byPoolUid: 'byPoolUid',
} as const;

/**
 * The context one reconcile works with: the API client and the Metal clients bound to the
 * reconcile's signal, so every Kubernetes and Metal call any step makes is cancelled when the
 * controller stops or loses its lease, and the reconcile's logger (with its reconcileID) for the
 * steps' lines and the Metal client's.
 */
export function inReconcile(ctx: IpamContext, rc: ReconcileContext): IpamContext {
  const clients = ctx.vrf.clients;
  const call = { signal: rc.signal, logger: rc.logger.child({ component: 'metal-api' }) };
  return {
    ...ctx,
    client: ctx.client.withSignal(rc.signal),
    logger: rc.logger,
    vrf: {
      ...ctx.vrf,
      clients: {
        clientFor: (token) => clients.clientFor(token).withContext(call),
        byFingerprint: (fingerprint) => clients.byFingerprint(fingerprint)?.withContext(call),
      },
    },
  };
}
