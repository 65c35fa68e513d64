/**
 * Overlap between two pools, for the webhook's same-namespace, cluster-wide and same-VRF checks.
 * The reference provider has none (issues #64, #272: two global pools over one range gave nodes the
 * same IP); whether an overlap is refused is the webhook's choice (pools in different VRFs may
 * legitimately overlap), this module only says where two pools collide.
 */
import { IssueCode } from './issues.js';
import type { Issue } from './issues.js';
import type { ResolvedPool } from './pool-spec.js';
import { formatRanges, intersectRanges, rangesContain, rangesFromValues, unionRanges } from './range.js';
import type { RangeSet } from './range.js';

/**
 * The addresses two pools could both hand out, plus those one could hand out while the other uses
 * them as its gateway. Two pools that only share a gateway (disjoint ranges of one subnet, the
 * usual way to split a subnet) do not overlap. Pools of different families never overlap.
 */
export function findPoolOverlap(a: ResolvedPool, b: ResolvedPool): RangeSet {
  if (a.family !== b.family) return [];
  let overlap = intersectRanges(a.allocatable, b.allocatable);
  const gatewaysTaken: bigint[] = [];
  if (b.gateway !== undefined && rangesContain(a.allocatable, b.gateway)) gatewaysTaken.push(b.gateway);
  if (a.gateway !== undefined && rangesContain(b.allocatable, a.gateway)) gatewaysTaken.push(a.gateway);
  if (gatewaysTaken.length > 0) overlap = unionRanges(overlap, rangesFromValues(gatewaysTaken));
  return overlap;
}

/** Whether `findPoolOverlap` is non-empty. */
export function poolsOverlap(a: ResolvedPool, b: ResolvedPool): boolean {
  return findPoolOverlap(a, b).length > 0;
}

/** Names the other pool in messages, e.g. `InClusterIPPool team-a/vrf-pool`. */
export interface OverlapIssueInput {
  readonly pool: ResolvedPool;
  readonly other: ResolvedPool;
  readonly otherName: string;
}

/**
 * A `PoolOverlap` issue on `addresses` listing the shared ranges, or undefined when the pools do
 * not overlap. At most 5 ranges are listed so a message stays readable.
 */
export function overlapIssue(input: OverlapIssueInput): Issue | undefined {
  const overlap = findPoolOverlap(input.pool, input.other);
  if (overlap.length === 0) return undefined;
  const shown = formatRanges(input.pool.family, overlap.slice(0, MAX_RANGES_SHOWN));
  const more = overlap.length > MAX_RANGES_SHOWN ? ` and ${overlap.length - MAX_RANGES_SHOWN} more ranges` : '';
  return {
    code: IssueCode.PoolOverlap,
    path: ['addresses'],
    message: `addresses overlap with ${input.otherName}: ${shown.join(', ')}${more}`,
  };
}

const MAX_RANGES_SHOWN = 5;
