// CAPI v1beta1 conditions as CAPP v0.9.0 writes them (sigs.k8s.io/cluster-api/util/conditions,
// v1.7): False conditions carry a severity, lastTransitionTime moves whenever the state (status,
// reason, severity, message) changes, Ready comes first, and Ready summarises InstanceReady with
// a step counter ("0 of 1 completed"). Pure: the caller passes `now`.
import type { V1Beta1Condition } from '@metal-l2/api';
import { formatTime } from '@metal-l2/kube';
import { PacketMachineConditionTypes } from './capp-api.js';

export type Severity = 'Error' | 'Warning' | 'Info';

export type ConditionState =
  | { readonly status: 'True' }
  | { readonly status: 'False'; readonly reason: string; readonly severity: Severity; readonly message: string }
  | { readonly status: 'Unknown'; readonly reason: string; readonly message: string };

function sameState(a: V1Beta1Condition, b: V1Beta1Condition): boolean {
  return (
    a.status === b.status &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.severity ?? '') === (b.severity ?? '') &&
    (a.message ?? '') === (b.message ?? '')
  );
}

function order(a: V1Beta1Condition, b: V1Beta1Condition): number {
  if (a.type === b.type) return 0;
  if (a.type === PacketMachineConditionTypes.ready) return -1;
  if (b.type === PacketMachineConditionTypes.ready) return 1;
  return a.type < b.type ? -1 : 1;
}

function toCondition(type: string, state: ConditionState): Omit<V1Beta1Condition, 'lastTransitionTime'> {
  switch (state.status) {
    case 'True':
      return { type, status: 'True' };
    case 'False':
      return {
        type,
        status: 'False',
        reason: state.reason,
        severity: state.severity,
        ...(state.message === '' ? {} : { message: state.message }),
      };
    case 'Unknown':
      return {
        type,
        status: 'Unknown',
        ...(state.reason === '' ? {} : { reason: state.reason }),
        ...(state.message === '' ? {} : { message: state.message }),
      };
  }
}

/** conditions.Set: the list with `type` in `state`; the transition time moves only on a change of state. */
export function setV1Beta1Condition(
  conditions: readonly V1Beta1Condition[] | undefined,
  change: { type: string; state: ConditionState },
  now: Date,
): V1Beta1Condition[] {
  const current = conditions ?? [];
  const next = toCondition(change.type, change.state);
  const previous = current.find((c) => c.type === change.type);
  const candidate: V1Beta1Condition = { ...next, lastTransitionTime: formatTime(now) };
  const kept = previous !== undefined && sameState(previous, candidate) ? previous : candidate;
  return [...current.filter((c) => c.type !== change.type), kept].sort(order);
}

const groupPriority = (c: V1Beta1Condition): number => {
  if (c.status === 'False') return c.severity === 'Error' ? 0 : c.severity === 'Warning' ? 1 : 2;
  return c.status === 'True' ? 3 : 4;
};

/**
 * conditions.SetSummary(WithConditions(InstanceReady), WithStepCounter()): Ready is True when
 * every summarised condition is; otherwise it takes the reason and severity of the most severe
 * one and the message "<n> of <total> completed". Nothing to summarise: Ready is left as it is.
 */
export function summarizeReady(conditions: readonly V1Beta1Condition[] | undefined, now: Date): V1Beta1Condition[] {
  const inScope = [PacketMachineConditionTypes.deviceReady];
  const summarised = (conditions ?? []).filter((c) => (inScope as readonly string[]).includes(c.type));
  if (summarised.length === 0) return [...(conditions ?? [])];
  const top = [...summarised].sort((a, b) => groupPriority(a) - groupPriority(b))[0];
  if (top === undefined || top.status === 'True')
    return setV1Beta1Condition(conditions, { type: PacketMachineConditionTypes.ready, state: { status: 'True' } }, now);
  const completed = summarised.filter((c) => c.status === 'True').length;
  const message = `${completed} of ${inScope.length} completed`;
  const state: ConditionState =
    top.status === 'False'
      ? {
          status: 'False',
          reason: top.reason ?? '',
          severity: top.severity === 'Error' || top.severity === 'Warning' ? top.severity : 'Info',
          message,
        }
      : { status: 'Unknown', reason: top.reason ?? '', message };
  return setV1Beta1Condition(conditions, { type: PacketMachineConditionTypes.ready, state }, now);
}
