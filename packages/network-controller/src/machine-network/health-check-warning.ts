import type { Machine, MachineHealthCheck } from '@metal-l2/api';

/** CAPI's default when a MachineHealthCheck does not set nodeStartupTimeout. */
const DEFAULT_NODE_STARTUP_TIMEOUT_MS = 600_000;
const UNIT_MS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };

/** A Go duration ("10m", "1h30m", "90s", "0") in milliseconds; undefined when it does not parse. */
export function parseGoDurationMs(text: string): number | undefined {
  if (text === '0') return 0;
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|ms|us|µs|ns|m|s)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  return parts.reduce((ms, p) => ms + Number(p[1]) * (UNIT_MS[p[2] ?? ''] ?? 0), 0);
}

/**
 * How long the health check gives a Machine to get a Node, in ms; 0 when it never remediates a
 * slow start. v1beta1 spells it as a duration (spec.nodeStartupTimeout), v1beta2 in seconds
 * (spec.checks.nodeStartupTimeoutSeconds); both default to 10 minutes.
 */
export function nodeStartupTimeoutMs(mhc: MachineHealthCheck): number {
  const seconds = mhc.spec.checks?.nodeStartupTimeoutSeconds;
  if (seconds !== undefined) return seconds * 1000;
  const duration = mhc.spec.nodeStartupTimeout;
  if (duration === undefined) return DEFAULT_NODE_STARTUP_TIMEOUT_MS;
  return parseGoDurationMs(duration) ?? DEFAULT_NODE_STARTUP_TIMEOUT_MS;
}

/** Whether the health check's selector picks the Machine (its cluster, labels and expressions). */
export function selectsMachine(mhc: MachineHealthCheck, machine: Machine): boolean {
  if (mhc.spec.clusterName !== machine.spec.clusterName) return false;
  const labels = machine.metadata.labels ?? {};
  const { matchLabels = {}, matchExpressions = [] } = mhc.spec.selector;
  if (!Object.entries(matchLabels).every(([k, v]) => labels[k] === v)) return false;
  return matchExpressions.every((e) => {
    const value = labels[e.key];
    switch (e.operator) {
      case 'In':
        return value !== undefined && (e.values ?? []).includes(value);
      case 'NotIn':
        return value === undefined || !(e.values ?? []).includes(value);
      case 'Exists':
        return value !== undefined;
      case 'DoesNotExist':
        return value === undefined;
      default:
        return false;
    }
  });
}

/**
 * The warning to give when a health check would remediate the machine before it can join: while
 * paused its infrastructure is not ready, so hold time plus bare-metal provisioning count against
 * nodeStartupTimeout. Undefined when no selecting check is that short.
 */
export function shortNodeStartupWarning(input: {
  readonly machine: Machine;
  readonly healthChecks: readonly MachineHealthCheck[];
  readonly holdTimeoutMs: number;
  readonly provisioningEstimateMs: number;
}): string | undefined {
  const needed = input.holdTimeoutMs + input.provisioningEstimateMs;
  for (const mhc of input.healthChecks) {
    const timeout = nodeStartupTimeoutMs(mhc);
    if (timeout > 0 && timeout < needed && selectsMachine(mhc, input.machine)) {
      return `MachineHealthCheck ${mhc.metadata.name ?? ''} gives a new Machine ${Math.round(timeout / 1000)} s to get a Node, but the network hold may take up to ${Math.round(input.holdTimeoutMs / 1000)} s and bare-metal provisioning about ${Math.round(input.provisioningEstimateMs / 1000)} s: raise its nodeStartupTimeout or the machine may be remediated before it joins`;
    }
  }
  return undefined;
}
