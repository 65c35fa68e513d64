import type { Machine, MachineNetwork, PacketMachine } from '@metal-l2/api';
import type { ReconcileContext } from '@metal-l2/kube';
import type { NetworkContext } from '../context.js';

/**
 * What one reconcile of a machine read, gathered once so the steps do not read the world again:
 * the PacketMachine, its MachineNetwork (a working copy whose status the steps edit in memory and
 * the runner patches once), and the CAPI Machine when it exists.
 */
export interface MachineNetworkScope {
  readonly ctx: NetworkContext;
  readonly rctx: ReconcileContext;
  readonly namespace: string;
  readonly name: string;
  readonly packetMachine: PacketMachine | undefined;
  readonly machineNetwork: MachineNetwork;
  readonly machine: Machine | undefined;
  readonly clusterName: string | undefined;
  readonly now: Date;
  /**
   * Writes the working copy now (with its durable record) instead of only at the end: for what
   * must be on the API server before an action outside it (a VLAN batch) can happen.
   */
  readonly checkpoint: () => Promise<void>;
}

/**
 * What a step asks for next. A step looks at observed state first, does at most one kind of
 * write, and returns one of these; the runner stops at the first that is not `continue`.
 * - wait: nothing more to do now; a watched object will change (or come back after `afterMs`).
 * - fail: a retryable failure; the condition is already set, the queue backs off.
 */
export type StepOutcome =
  { readonly kind: 'continue' } | { readonly kind: 'wait'; readonly afterMs?: number } | { readonly kind: 'fail'; readonly error: unknown };

export type Step = (scope: MachineNetworkScope) => Promise<StepOutcome>;

/** A phase of a step either ends the step with an outcome or hands the next phase what it needs. */
export type Phase<T> = { readonly stop: StepOutcome } | { readonly next: T };

export const proceed: StepOutcome = { kind: 'continue' };

export function waitFor(afterMs?: number): StepOutcome {
  return afterMs === undefined ? { kind: 'wait' } : { kind: 'wait', afterMs };
}

export function failed(error: unknown): StepOutcome {
  return { kind: 'fail', error };
}

/** `namespace/name` for messages. */
export function describe(scope: Pick<MachineNetworkScope, 'namespace' | 'name'>, name = scope.name): string {
  return `${scope.namespace}/${name}`;
}
