import { PoolConditionTypes, PoolReasons, type PoolStatus } from '@metal-l2/api';
import { countAddresses, toStatusCounts, type Allocation, type AllocationState } from '@metal-l2/ipam-core';
import { setConditions, type Condition, type ConditionInput } from '@metal-l2/kube';

/** Why a pool cannot hand out addresses right now, or undefined when it can. */
export type PoolBlocker =
  | { readonly reason: typeof PoolReasons.invalidSpec; readonly message: string }
  | { readonly reason: typeof PoolReasons.paused; readonly message: string }
  | { readonly reason: typeof PoolReasons.vrfNotReady; readonly message: string }
  | { readonly reason: typeof PoolReasons.deleting; readonly message: string }
  | { readonly reason: typeof PoolReasons.overlapping; readonly message: string };

export interface PoolStatusInput {
  readonly current: PoolStatus | undefined;
  readonly allocations: readonly Allocation[];
  readonly state: AllocationState | undefined;
  readonly blocker: PoolBlocker | undefined;
  /**
   * The pool's Metal side: the VRFReady condition to set, or 'keep' to leave it as it is (paused,
   * deleting); undefined drops it and status.vrf (a pool without spec.vrf). status.vrf itself is
   * never written here: the VRF steps record it as they go (recordVrfStatus), each change applied
   * to what the server holds, so a commit computed from a stale read cannot take an id back.
   */
  readonly vrf?: { readonly condition: ConditionInput } | 'keep' | undefined;
  readonly generation: number | undefined;
  readonly now: Date;
  /** Set when the pool object reached its size budget: Ready turns False with StatusFull. */
  readonly full?: StatusFull;
}

/** The pool object against its size budget, when it has no room left for the claims that wait. */
export interface StatusFull {
  readonly projectedBytes: number;
  readonly budgetBytes: number;
  readonly waiting: number;
}

/**
 * The status a pool should have. Pure; the reconciler sends it only when it differs from what
 * the server has (so a steady pool is never written).
 */
export function computePoolStatus(input: PoolStatusInput): PoolStatus {
  const counts = input.state === undefined ? undefined : toStatusCounts(countAddresses(input.state));
  const full = input.full;
  const ready: ConditionInput =
    input.blocker === undefined && full !== undefined
      ? {
          type: PoolConditionTypes.ready,
          status: 'False',
          reason: PoolReasons.statusFull,
          message: fullMessage({ full, allocations: input.allocations.length, free: counts?.free }),
          ...generation(input.generation),
        }
      : input.blocker === undefined
        ? {
            type: PoolConditionTypes.ready,
            status: 'True',
            reason: PoolReasons.ready,
            message: counts === undefined ? 'pool is ready' : `${counts.free} of ${counts.total} addresses free`,
            ...generation(input.generation),
          }
        : {
            type: PoolConditionTypes.ready,
            status: 'False',
            reason: input.blocker.reason,
            message: input.blocker.message,
            ...generation(input.generation),
          };
  const vrf = input.vrf;
  const inputs = vrf === undefined || vrf === 'keep' ? [ready] : [ready, { ...vrf.condition, ...generation(input.generation) }];
  const previous = (input.current?.conditions ?? []).filter(
    (c) => vrf !== undefined || c.type !== PoolConditionTypes.vrfReady,
  ) as Condition[];
  const conditions = setConditions(previous, inputs, input.now);
  const { vrf: currentVrf, ...current } = input.current ?? {};
  return {
    ...current,
    ...(vrf === undefined || currentVrf === undefined ? {} : { vrf: currentVrf }),
    ...(counts === undefined ? {} : { ipAddresses: { ...counts } }),
    conditions,
    ...generation(input.generation, 'observedGeneration'),
  };
}

function fullMessage(input: { full: StatusFull; allocations: number; free: number | undefined }): string {
  const { full } = input;
  const free = input.free === undefined ? '' : ` although ${input.free} addresses are free`;
  const waiting =
    full.waiting === 0
      ? 'new claims will wait for room'
      : `${full.waiting === 1 ? '1 claim waits' : `${full.waiting} claims wait`} for room${free}`;
  return (
    `the pool object reached its size budget (${input.allocations} allocations, about ${full.projectedBytes} of ${full.budgetBytes} bytes): ` +
    `${waiting}; releases go on. Give further claims another pool`
  );
}

function generation(value: number | undefined, key: 'observedGeneration' = 'observedGeneration'): Record<string, number> {
  return value === undefined ? {} : { [key]: value };
}
