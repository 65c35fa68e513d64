// Prometheus metrics for Metal API calls, as an observer the client feeds. Labels are the spec's
// operationId, so a dashboard line reads like the API reference ("findDeviceById", "assignPort").

import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { MetalApiObserver } from './observer.js';

export const METAL_API_METRICS = {
  calls: 'metal_api_calls_total',
  errors: 'metal_api_errors_total',
  retries: 'metal_api_retries_total',
  requests: 'metal_api_requests_total',
  rateLimitWait: 'metal_api_rate_limit_wait_seconds_total',
  callDuration: 'metal_api_call_duration_seconds',
} as const;

/**
 * Registers the Metal API metrics in `registry` (reusing them when a second client registers into
 * the same registry) and returns the observer that updates them:
 * - metal_api_calls_total{operation}: calls made, whatever their outcome;
 * - metal_api_errors_total{operation,code}: calls that ended in an error, by error code;
 * - metal_api_retries_total{operation,reason}: attempts repeated (rate-limited, server-error, ...);
 * - metal_api_requests_total{operation,status}: HTTP requests sent, by status (or network/timeout);
 * - metal_api_rate_limit_wait_seconds_total{operation}: time held back by the client-side limit;
 * - metal_api_call_duration_seconds{operation}: call latency, retries and waits included.
 */
export function createPrometheusObserver(registry: Registry): MetalApiObserver {
  const calls = counter(registry, {
    name: METAL_API_METRICS.calls,
    help: 'Metal API calls made, by operation.',
    labelNames: ['operation'],
  });
  const errors = counter(registry, {
    name: METAL_API_METRICS.errors,
    help: 'Metal API calls that failed, by operation and error code.',
    labelNames: ['operation', 'code'],
  });
  const retries = counter(registry, {
    name: METAL_API_METRICS.retries,
    help: 'Metal API attempts retried, by operation and reason.',
    labelNames: ['operation', 'reason'],
  });
  const requests = counter(registry, {
    name: METAL_API_METRICS.requests,
    help: 'HTTP requests sent to the Metal API, by operation and status.',
    labelNames: ['operation', 'status'],
  });
  const rateLimitWait = counter(registry, {
    name: METAL_API_METRICS.rateLimitWait,
    help: 'Seconds Metal API requests waited for the client-side rate limit.',
    labelNames: ['operation'],
  });
  const callDuration = histogram(registry, {
    name: METAL_API_METRICS.callDuration,
    help: 'Metal API call duration, retries included.',
    labelNames: ['operation'],
  });

  return {
    attemptFinished: (e) => requests.inc({ operation: e.operation, status: String(e.status) }),
    retryScheduled: (e) => retries.inc({ operation: e.operation, reason: e.reason }),
    rateLimitWaited: (e) => rateLimitWait.inc({ operation: e.operation }, e.waitMs / 1000),
    callFinished: (e) => {
      calls.inc({ operation: e.operation });
      if (e.outcome !== 'ok') errors.inc({ operation: e.operation, code: e.outcome });
      callDuration.observe({ operation: e.operation }, e.durationMs / 1000);
    },
  };
}

interface MetricSpec<L extends string> {
  name: string;
  help: string;
  labelNames: L[];
}

function counter<L extends string>(registry: Registry, spec: MetricSpec<L>): Counter<L> {
  const existing = registry.getSingleMetric(spec.name);
  if (existing instanceof Counter) return existing;
  return new Counter({ ...spec, registers: [registry] });
}

function histogram<L extends string>(registry: Registry, spec: MetricSpec<L>): Histogram<L> {
  const existing = registry.getSingleMetric(spec.name);
  if (existing instanceof Histogram) return existing;
  return new Histogram({ ...spec, buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers: [registry] });
}
