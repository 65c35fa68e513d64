import { Counter, Gauge, type Registry } from 'prom-client';

/** What operators graph and alert on for the IPAM provider, beside the runtime's reconcile metrics. */
export interface IpamMetrics {
  /** Addresses per pool and state (total, used, free, out_of_range), as in the pool's status. */
  readonly poolAddresses: Gauge<'kind' | 'namespace' | 'pool' | 'state'>;
  readonly allocations: Counter<'kind'>;
  readonly releases: Counter<'kind'>;
  /** Status writes that lost a race (another writer committed first) and were decided again. */
  readonly commitConflicts: Counter<'kind'>;
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
      help: 'Pool status writes refused because another writer committed first (decided again at once).',
      labelNames: ['kind'],
      registers: [registry],
    }),
  };
}
