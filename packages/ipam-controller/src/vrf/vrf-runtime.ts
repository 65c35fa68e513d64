import { cappedExponentialMs, type BackoffLimits } from '@metal-l2/backoff';
import type { Logger } from '@metal-l2/kube';
import { MetalClients, type MetalSettings } from '@metal-l2/metal-api';
import { VrfMemory } from './vrf-memory.js';

/** How often a verified pool's Metal side is checked again (drift: a reservation deleted by hand). */
export const DEFAULT_VRF_RESYNC_MS = 5 * 60_000;

/**
 * How long a create whose outcome is unknown (timeout, 5xx) holds back the next create of the
 * same kind, so that an object Metal is still making is found instead of made twice.
 */
export const DEFAULT_VRF_SETTLE_MS = 15_000;

/** Retry delays after a failed pass: base doubling per failure in a row, capped. */
export const DEFAULT_VRF_RETRY = { baseMs: 1_000, maxMs: 60_000 } as const;

/** What the VRF steps need beyond the IPAM context: Metal clients, the controller's namespace, timing. */
export interface VrfRuntime {
  /** One Metal client per token (MetalClients); inside a reconcile, bound to it (inReconcile). */
  readonly clients: Pick<MetalClients, 'clientFor' | 'byFingerprint'>;
  readonly memory: VrfMemory;
  /** This management cluster's identity, tagged on what pools create (ownership.ts). */
  readonly clusterIdentity: string;
  /** Where a global pool's credentials Secret lives when its ref names no namespace. */
  readonly controllerNamespace?: string | undefined;
  readonly resyncMs: number;
  readonly retry: BackoffLimits;
  readonly settleMs: number;
}

export interface VrfRuntimeOptions {
  /** Base URL, timeouts, retry policy and rate limit of the Metal client (default: the real API). */
  readonly metal?: MetalSettings | undefined;
  readonly controllerNamespace?: string | undefined;
  readonly resyncMs?: number | undefined;
  readonly retry?: BackoffLimits | undefined;
  readonly settleMs?: number | undefined;
}

export function createVrfRuntime(options: VrfRuntimeOptions & { readonly clusterIdentity: string }, logger: Logger): VrfRuntime {
  return {
    clients: new MetalClients({ settings: options.metal ?? {}, logger: logger.child({ component: 'metal-api' }) }),
    memory: new VrfMemory(),
    clusterIdentity: options.clusterIdentity,
    controllerNamespace: options.controllerNamespace,
    resyncMs: options.resyncMs ?? DEFAULT_VRF_RESYNC_MS,
    retry: options.retry ?? DEFAULT_VRF_RETRY,
    settleMs: options.settleMs ?? DEFAULT_VRF_SETTLE_MS,
  };
}

/** The delay before the next try after `failures` failed passes in a row. */
export function retryDelayMs(runtime: Pick<VrfRuntime, 'retry'>, failures: number): number {
  return cappedExponentialMs(runtime.retry, failures);
}
