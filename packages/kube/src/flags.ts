import { readFileSync } from 'node:fs';
import type { ParseArgsConfig } from 'node:util';
import { parseBindAddress } from './http-server.js';
import { parseLogLevel, type LogFormat, type LogLevel } from './log.js';

/**
 * The flags every metal-l2 controller binary shares, in node:util parseArgs form. A main spreads
 * them into its own options: `parseArgs({ args: normalizeBooleanFlags(argv), options: {
 * ...runtimeFlagOptions, 'webhook-port': {...} }, allowNegative: true })`.
 */
export const runtimeFlagOptions = {
  kubeconfig: { type: 'string' },
  namespace: { type: 'string' },
  'leader-elect': { type: 'boolean', default: true },
  'leader-election-namespace': { type: 'string' },
  'leader-election-id': { type: 'string' },
  'metrics-bind-address': { type: 'string', default: ':8080' },
  'health-probe-bind-address': { type: 'string', default: ':8081' },
  concurrency: { type: 'string', default: '10' },
  'log-level': { type: 'string', default: 'info' },
  'log-format': { type: 'string', default: 'json' },
  'graceful-shutdown-timeout-seconds': { type: 'string', default: '30' },
  // No default here: each controller has its own (a pool reconcile may handle thousands of claims).
  'reconcile-timeout-seconds': { type: 'string' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

export interface RuntimeFlags {
  /** Absent: in-cluster configuration, or the default kubeconfig outside a cluster. */
  readonly kubeconfig: string | undefined;
  /** Watch one namespace; absent means all. */
  readonly namespace: string | undefined;
  readonly leaderElect: boolean;
  readonly leaderElectionNamespace: string | undefined;
  readonly leaderElectionId: string | undefined;
  readonly metricsBindAddress: string;
  readonly healthProbeBindAddress: string;
  readonly concurrency: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  /**
   * How long a stop (SIGTERM) waits for running reconciles before the process exits anyway. A pod's
   * terminationGracePeriodSeconds must be longer, or the kubelet kills it mid-reconcile.
   */
  readonly gracefulShutdownTimeoutSeconds: number;
  /** How long one reconcile may run before its signal aborts and it is retried; absent: the controller's default. */
  readonly reconcileTimeoutSeconds: number | undefined;
}

/**
 * Rewrites `--flag=true|false` (the Go/klog spelling operators know) to what parseArgs accepts
 * for booleans: `--flag` / `--no-flag`.
 */
export function normalizeBooleanFlags(argv: readonly string[], booleans: readonly string[] = ['leader-elect']): string[] {
  return argv.map((arg) => {
    const match = /^--([a-z0-9-]+)=(true|false)$/i.exec(arg);
    if (match === null || !booleans.includes(match[1] ?? '')) return arg;
    return match[2]?.toLowerCase() === 'true' ? `--${match[1] ?? ''}` : `--no-${match[1] ?? ''}`;
  });
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Checks and types the shared flags from parseArgs' `values`; throws with a message naming the flag. */
export function readRuntimeFlags(values: Record<string, unknown>): RuntimeFlags {
  const concurrencyText = typeof values['concurrency'] === 'string' ? values['concurrency'] : '10';
  const concurrency = Number(concurrencyText);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new Error(`--concurrency must be a positive integer, got "${concurrencyText}"`);
  const logFormat = values['log-format'] ?? 'json';
  if (logFormat !== 'json' && logFormat !== 'text') throw new Error(`--log-format must be json or text, got ${JSON.stringify(logFormat)}`);
  const metricsBindAddress = typeof values['metrics-bind-address'] === 'string' ? values['metrics-bind-address'] : ':8080';
  const healthProbeBindAddress = typeof values['health-probe-bind-address'] === 'string' ? values['health-probe-bind-address'] : ':8081';
  // Fail at start, not when the server is first needed.
  parseBindAddress(metricsBindAddress);
  parseBindAddress(healthProbeBindAddress);
  return {
    kubeconfig: optionalString(values['kubeconfig']),
    namespace: optionalString(values['namespace']),
    leaderElect: values['leader-elect'] !== false,
    leaderElectionNamespace: optionalString(values['leader-election-namespace']),
    leaderElectionId: optionalString(values['leader-election-id']),
    metricsBindAddress,
    healthProbeBindAddress,
    concurrency,
    logLevel: parseLogLevel(typeof values['log-level'] === 'string' ? values['log-level'] : 'info'),
    logFormat,
    gracefulShutdownTimeoutSeconds: intFlag(
      typeof values['graceful-shutdown-timeout-seconds'] === 'string' ? values['graceful-shutdown-timeout-seconds'] : '30',
      'graceful-shutdown-timeout-seconds',
      1,
    ),
    reconcileTimeoutSeconds:
      typeof values['reconcile-timeout-seconds'] === 'string'
        ? intFlag(values['reconcile-timeout-seconds'], 'reconcile-timeout-seconds', 1)
        : undefined,
  };
}

/** An integer flag value no smaller than `min`; throws with a message naming the flag. */
export function intFlag(value: string, flag: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${flag} takes an integer >= ${min}, not ${JSON.stringify(value)}`);
  return n;
}

/** An http(s) URL flag value; throws with a message naming the flag. */
export function urlFlag(value: string, flag: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`--${flag} takes an http(s) URL, not ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error(`--${flag} takes an http(s) URL, not ${JSON.stringify(value)}`);
  return value;
}

const serviceAccountNamespaceFile = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/** The namespace this process runs in: POD_NAMESPACE, else the service account's; undefined outside a pod. */
export function podNamespace(): string | undefined {
  const fromEnv = process.env['POD_NAMESPACE'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  try {
    return readFileSync(serviceAccountNamespaceFile, 'utf8').trim();
  } catch {
    return undefined;
  }
}
