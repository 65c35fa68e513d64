import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { listen, parseBindAddress, type ServerHandle } from './http-server.js';

/**
 * The runtime's Prometheus metrics, named like controller-runtime's and client-go's so existing
 * dashboards and alerts apply. One set per registry (a process has one; tests make their own).
 */
export interface RuntimeMetrics {
  readonly registry: Registry;
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly terminalReconcileErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  readonly queueDepth: Gauge<'name'>;
  readonly queueAdds: Counter<'name'>;
  readonly queueRetries: Counter<'name'>;
  readonly informerRestarts: Counter<'resource' | 'reason'>;
  readonly informerLists: Counter<'resource'>;
  readonly leaderStatus: Gauge<'name'>;
}

/** Registers the runtime's metrics in `registry` (a fresh one by default). Call once per registry. */
export function createRuntimeMetrics(registry: Registry = new Registry()): RuntimeMetrics {
  const registers = [registry];
  return {
    registry,
    reconcileTotal: new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Reconciliations per controller and result (success, error, requeue_after, terminal_error).',
      labelNames: ['controller', 'result'],
      registers,
    }),
    reconcileErrors: new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Reconciliations that failed and will be retried.',
      labelNames: ['controller'],
      registers,
    }),
    terminalReconcileErrors: new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Reconciliations that failed with a terminal error (not retried).',
      labelNames: ['controller'],
      registers,
    }),
    reconcileTime: new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Duration of reconciliations.',
      labelNames: ['controller'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    activeWorkers: new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Reconciliations in progress.',
      labelNames: ['controller'],
      registers,
    }),
    queueDepth: new Gauge({ name: 'workqueue_depth', help: 'Keys waiting in the work queue.', labelNames: ['name'], registers }),
    queueAdds: new Counter({ name: 'workqueue_adds_total', help: 'Keys added to the work queue.', labelNames: ['name'], registers }),
    queueRetries: new Counter({
      name: 'workqueue_retries_total',
      help: 'Rate-limited re-adds (retries).',
      labelNames: ['name'],
      registers,
    }),
    informerRestarts: new Counter({
      name: 'metal_l2_informer_watch_restarts_total',
      help: 'Watch restarts per resource and reason (closed, error, gone, watchdog, relist).',
      labelNames: ['resource', 'reason'],
      registers,
    }),
    informerLists: new Counter({
      name: 'metal_l2_informer_lists_total',
      help: 'Full lists per resource (first sync, recovery after 410 Gone, a periodic relist when configured).',
      labelNames: ['resource'],
      registers,
    }),
    leaderStatus: new Gauge({
      name: 'leader_election_master_status',
      help: '1 while this process holds the lease, else 0.',
      labelNames: ['name'],
      registers,
    }),
  };
}

/** Adds Node.js process metrics (heap, event loop lag, GC) to `registry`. */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
}

/** Serves `registry` at /metrics on `address` ("0" disables: resolves undefined). */
export async function startMetricsServer(options: { address: string; registry: Registry }): Promise<ServerHandle | undefined> {
  const bind = parseBindAddress(options.address);
  if (bind === undefined) return undefined;
  const { registry } = options;
  return listen({
    address: bind,
    handler: (req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end(err instanceof Error ? err.message : 'metrics failed'),
      );
    },
  });
}
