import type { CapiIpamVersion, Cluster, IPAddress, IPAddressClaim, IPPool, PoolKind, ResourceType } from '@metal-l2/api';
import type { KubeClient, Logger, ObjectKey } from '@metal-l2/kube';
import type { RecentWrites } from './claim/recent-writes.js';
import type { IpamMetrics } from './ipam-metrics.js';
import type { VrfRuntime } from './vrf/vrf-runtime.js';

/** The read side the reconcilers use: the informer caches, with the indexes declared in watches.ts. */
export interface ObjectCache<T> {
  get(key: ObjectKey): T | undefined;
  list(): T[];
  byIndex(name: string, value: string): T[];
}

export interface IpamCaches {
  readonly pools: Readonly<Record<PoolKind, ObjectCache<IPPool>>>;
  readonly claims: ObjectCache<IPAddressClaim>;
  readonly addresses: ObjectCache<IPAddress>;
  /** Absent when the server serves no CAPI Cluster kind: then no claim can name a cluster that exists. */
  readonly clusters?: ObjectCache<Cluster> | undefined;
}

export interface EventSink {
  event(
    obj: { apiVersion?: string; kind?: string; metadata: { name?: string; namespace?: string; uid?: string } },
    event: { type: 'Normal' | 'Warning'; reason: string; message: string },
  ): void;
}

/** Everything the IPAM reconcilers need from outside, handed in by main.ts (or a test). */
export interface IpamContext {
  readonly client: KubeClient;
  readonly version: CapiIpamVersion;
  readonly claimType: ResourceType;
  readonly addressType: ResourceType;
  readonly caches: IpamCaches;
  readonly events: EventSink;
  readonly logger: Logger;
  readonly now: () => Date;
  /** Set when the controller watches one namespace only (`--namespace`). */
  readonly watchNamespace?: string | undefined;
  /** How many claim/IPAddress writes one pool reconcile runs at once. */
  readonly writeConcurrency: number;
  /** Our own recent writes, so a lagging cache does not make us send them again. */
  readonly recentWrites: RecentWrites;
  readonly metrics?: IpamMetrics | undefined;
  /** Metal clients, memory and timing of the VRF steps (pools with spec.vrf). */
  readonly vrf: VrfRuntime;
}

export const IndexNames = {
  /** claims and IPAddresses by the pool they reference (poolIndexKey). */
  byPool: 'byPool',
  /** claims by `namespace/clusterName`. */
  byCluster: 'byCluster',
} as const;
