/** A metav1.Condition, as it appears in `status.conditions`. */
export interface Condition {
  readonly type: string;
  readonly status: ConditionStatus;
  /** PascalCase, never renamed: users alert on it. */
  readonly reason: string;
  readonly message: string;
  /** RFC 3339, seconds precision (metav1.Time). */
  readonly lastTransitionTime: string;
  readonly observedGeneration?: number;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A condition as a reconciler computes it; setCondition stamps the transition time. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/** The summary condition, kept first so `kubectl get -o yaml` shows it on top. */
export const readyCondition = 'Ready';

/** metav1.Time has seconds precision; sending milliseconds would make every write look like a change. */
export function formatTime(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function compareTypes(a: Condition, b: Condition): number {
  if (a.type === b.type) return 0;
  if (a.type === readyCondition) return -1;
  if (b.type === readyCondition) return 1;
  return a.type < b.type ? -1 : 1;
}

/**
 * Returns the conditions with `next` set. lastTransitionTime moves only when the status flips
 * (a new reason or message alone is not a transition); the order is Ready first, then by type,
 * whatever the insertion order, so that recomputing the same conditions yields an identical
 * list and the status patch stays empty. Pure: the input is not modified.
 */
export function setCondition(conditions: readonly Condition[] | undefined, next: ConditionInput, now: Date): Condition[] {
  const current = conditions ?? [];
  const previous = current.find((c) => c.type === next.type);
  const lastTransitionTime = previous !== undefined && previous.status === next.status ? previous.lastTransitionTime : formatTime(now);
  const updated: Condition = {
    type: next.type,
    status: next.status,
    reason: next.reason,
    message: next.message,
    lastTransitionTime,
    ...(next.observedGeneration !== undefined ? { observedGeneration: next.observedGeneration } : {}),
  };
  return [...current.filter((c) => c.type !== next.type), updated].sort(compareTypes);
}

/** Sets several conditions at once (same rules as setCondition). */
export function setConditions(conditions: readonly Condition[] | undefined, next: readonly ConditionInput[], now: Date): Condition[] {
  return next.reduce<Condition[]>((acc, c) => setCondition(acc, c, now), [...(conditions ?? [])]);
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

export function getCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'True';
}

export function isFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'False';
}
