import { PoolConditionTypes, PoolReasons, type PoolStatus } from '@metal-l2/api';
import { countAddresses, toStatusCounts, type AllocationState } from '@metal-l2/ipam-core';
import { setConditions, type Condition, type ConditionInput } from '@metal-l2/kube';

/** Why a pool cannot hand out addresses right now, or undefined when it can. */
export type PoolBlocker =
  | { readonly reason: typeof PoolReasons.invalidSpec; readonly message: string }
  | { readonly reason: typeof PoolReasons.paused; readonly message: string }
  | { readonly reason: typeof PoolReasons.vrfNotReady; readonly message: string }
  | { readonly reason: typeof PoolReasons.deleting; readonly message: string }
  | { readonly reason: typeof PoolReasons.overlapping; readonly message: string }
  | { readonly reason: typeof PoolReasons.copiedFromAnotherCluster; readonly message: string }
  /** `untilMs`: when the hold ends (status.reuseHeldUntil), to come back then. */
  | { readonly reason: typeof PoolReasons.allocationRecordsLost; readonly message: string; readonly untilMs: number };

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
  /** How many IPAddressBlocks the pool has now (status.blocks.count); undefined leaves it as it is. */
  readonly blockCount?: number | undefined;
  /**
   * AddressesMovedOut: the condition to set, 'keep' it as it is (a paused pool, a controller that
   * sees one namespace only), or undefined to drop it (nothing held for claims that left).
   */
  readonly movedOut?: ConditionInput | 'keep' | undefined;
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
  const { vrf, movedOut } = input;
  const inputs: ConditionInput[] = [ready];
  if (vrf !== undefined && vrf !== 'keep') inputs.push({ ...vrf.condition, ...generation(input.generation) });
  if (movedOut !== undefined && movedOut !== 'keep') inputs.push({ ...movedOut, ...generation(input.generation) });
  const previous = (input.current?.conditions ?? []).filter(
    (c) =>
      (vrf !== undefined || c.type !== PoolConditionTypes.vrfReady) &&
      (movedOut !== undefined || c.type !== PoolConditionTypes.addressesMovedOut),
  ) as Condition[];
  const conditions = setConditions(previous, inputs, input.now);
  const { vrf: currentVrf, reuseHeldUntil, blocks, ...current } = input.current ?? {};
  // A hold that is over says nothing any more: it goes with the next write.
  const held = reuseHeldUntil !== undefined && Date.parse(reuseHeldUntil) > input.now.getTime() ? { reuseHeldUntil } : {};
  const blockCount = input.blockCount;
  return {
    ...current,
    ...(blocks === undefined ? {} : { blocks: blockCount === undefined ? blocks : { ...blocks, count: blockCount } }),
    ...held,
    ...(vrf === undefined || currentVrf === undefined ? {} : { vrf: currentVrf }),
    ...(counts === undefined ? {} : { ipAddresses: { ...counts } }),
    conditions,
    ...generation(input.generation, 'observedGeneration'),
  };
}

function generation(value: number | undefined, key: 'observedGeneration' = 'observedGeneration'): Record<string, number> {
  return value === undefined ? {} : { [key]: value };
}
