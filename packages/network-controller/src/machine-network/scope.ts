import {
  MachineNetworkConditionTypes,
  MachineNetworkReasons,
  type Machine,
  type MachineNetwork,
  type MachineNetworkStatus,
  type PacketMachine,
} from '@metal-l2/api';
import { getCondition, setCondition, type ConditionStatus, type ReconcileContext, type Step as KubeStep } from '@metal-l2/kube';
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

export type Step = KubeStep<MachineNetworkScope>;

/** `namespace/name` for messages. */
export function describe(scope: Pick<MachineNetworkScope, 'namespace' | 'name'>, name = scope.name): string {
  return `${scope.namespace}/${name}`;
}

// ---- How a step reports: the MachineNetwork's conditions ----

type ConditionType = (typeof MachineNetworkConditionTypes)[keyof typeof MachineNetworkConditionTypes];

/** Sets one condition on the working copy (transition time moves only when the status flips). */
export function markCondition(
  mn: MachineNetwork,
  condition: { type: ConditionType; status: ConditionStatus; reason: string; message: string },
  now: Date,
): void {
  const status: MachineNetworkStatus = (mn.status ??= {});
  status.conditions = setCondition(status.conditions, { ...condition, observedGeneration: mn.metadata.generation ?? 0 }, now);
}

export function conditionIs(mn: MachineNetwork, type: ConditionType, status: ConditionStatus): boolean {
  return getCondition(mn.status?.conditions, type)?.status === status;
}

const ORDER = [
  MachineNetworkConditionTypes.addressesAllocated,
  MachineNetworkConditionTypes.userDataInjected,
  MachineNetworkConditionTypes.portsConfigured,
] as const;

/**
 * Ready summarises the others: True when all three are, else the first that is not True (in flow
 * order) lends its reason and message, so `kubectl get machinenetworks` shows where a machine
 * stands. An override (hold timeout, pause) wins over the summary.
 */
export function summarizeReady(mn: MachineNetwork, now: Date, override?: { reason: string; message: string }): void {
  const conditions = mn.status?.conditions;
  if (override !== undefined) {
    markCondition(mn, { type: MachineNetworkConditionTypes.ready, status: 'False', ...override }, now);
    return;
  }
  for (const type of ORDER) {
    const c = getCondition(conditions, type);
    if (c === undefined) {
      markCondition(
        mn,
        {
          type: MachineNetworkConditionTypes.ready,
          status: 'False',
          reason: MachineNetworkReasons.waitingForAddresses,
          message: `${type} not evaluated yet`,
        },
        now,
      );
      return;
    }
    if (c.status !== 'True') {
      markCondition(mn, { type: MachineNetworkConditionTypes.ready, status: 'False', reason: c.reason, message: c.message }, now);
      return;
    }
  }
  markCondition(
    mn,
    {
      type: MachineNetworkConditionTypes.ready,
      status: 'True',
      reason: MachineNetworkReasons.ready,
      message: 'addresses allocated, user data injected, ports configured',
    },
    now,
  );
}
