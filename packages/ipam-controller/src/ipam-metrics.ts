import { Counter, Gauge, type Registry } from 'prom-client';

/** What operators graph and alert on for the IPAM provider, beside the runtime's reconcile metrics. */
export interface IpamMetrics {
  /** Addresses per pool and state (total, used, free, out_of_range), as in the pool's status. */
  readonly poolAddresses: Gauge<'kind' | 'namespace' | 'pool' | 'state'>;
  readonly allocations: Counter<'kind'>;
  readonly releases: Counter<'kind'>;
  /** Block or pool status writes that lost a race (another writer committed first) and were decided again. */
  readonly commitConflicts: Counter<'kind'>;
  /**
   * Second entries of one claim dropped (two writers with stale views of different blocks each
   * gave it an address; its IPAddress decided which it keeps).
   */
  readonly duplicatesDropped: Counter<'kind'>;
  /** The pool object's size as the API server stores it (JSON, managedFields included). */
  readonly poolObjectBytes: Gauge<'kind' | 'namespace' | 'pool'>;
  /** The size budget of an object holding allocations, an IPAddressBlock (--pool-status-budget-bytes). */
  readonly poolObjectBudgetBytes: Gauge;
}

export function createIpamMetrics(registry: Registry): IpamMetrics {
  return {
    poolAddresses: new Gauge({
      name: 'metal_l2_ipam_pool_addresses',
      help: 'Addresses of a pool by state (total, used, free, out_of_range), as in its status.',
      labelNames: ['kind', 'namespace', 'pool', 'state'],
      registers: [registry],
    }),
    allocations: new Counter({
      name: 'metal_l2_ipam_allocations_total',
      help: 'Addresses allocated to claims.',
      labelNames: ['kind'],
      registers: [registry],
    }),
    releases: new Counter({
      name: 'metal_l2_ipam_releases_total',
      help: 'Addresses released by deleted or vanished claims.',
      labelNames: ['kind'],
      registers: [registry],
    }),
    commitConflicts: new Counter({
      name: 'metal_l2_ipam_commit_conflicts_total',
      help: 'Block or pool status writes refused because another writer committed first (decided again at once).',
      labelNames: ['kind'],
      registers: [registry],
    }),
    duplicatesDropped: new Counter({
      name: 'metal_l2_ipam_duplicate_entries_dropped_total',
      help: 'Extra entries of a claim held in two blocks (a stale-cache race), dropped once its IPAddress decided which address it keeps.',
      labelNames: ['kind'],
      registers: [registry],
    }),
    poolObjectBytes: new Gauge({
      name: 'metal_l2_ipam_pool_object_bytes',
      help: 'Size of the pool object as the API server stores it (JSON, managedFields included); its allocations live in IPAddressBlocks.',
      labelNames: ['kind', 'namespace', 'pool'],
      registers: [registry],
    }),
    poolObjectBudgetBytes: new Gauge({
      name: 'metal_l2_ipam_pool_object_budget_bytes',
      help: 'Size budget of an object holding allocations (an IPAddressBlock; --block-size must fit it); the API server refuses objects past ~1.5 MiB.',
      registers: [registry],
    }),
  };
}
