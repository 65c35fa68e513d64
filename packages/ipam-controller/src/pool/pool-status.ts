import { PoolConditionTypes, PoolReasons, type PoolStatus } from '@metal-l2/api';
import { countAddresses, toStatusCounts, type AllocationState } from '@metal-l2/ipam-core';
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
}

/**
 * The status a pool should have. Pure; the reconciler sends it only when it differs from what
 * the server has (so a steady pool is never written).
 */
export function computePoolStatus(input: PoolStatusInput): PoolStatus {
  const counts = input.state === undefined ? undefined : toStatusCounts(countAddresses(input.state));
  const ready: ConditionInput =
    input.blocker === undefined
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

function generation(value: number | undefined, key: 'observedGeneration' = 'observedGeneration'): Record<string, number> {
  return value === undefined ? {} : { [key]: value };
}
