import { ClusterEndpointConditionTypes, ClusterEndpointEventReasons, ClusterEndpointReasons } from '@metal-l2/api';
import { getCondition, setCondition, type ConditionStatus } from '@metal-l2/kube';
import type { EndpointScope } from './context.js';

type ConditionType = (typeof ClusterEndpointConditionTypes)[keyof typeof ClusterEndpointConditionTypes];

/** Sets one condition on the working copy (transition time moves only when the status flips). */
export function markEndpointCondition(
  scope: Pick<EndpointScope, 'endpoint' | 'now'>,
  condition: { type: ConditionType; status: ConditionStatus; reason: string; message: string },
): void {
  const { endpoint } = scope;
  const status = (endpoint.status ??= {});
  status.conditions = setCondition(status.conditions, { ...condition, observedGeneration: endpoint.metadata.generation ?? 0 }, scope.now);
}

/**
 * The address stays claimed only because it is in use (the claim deleted, or the Cluster moved to
 * another endpoint while machines announce it): AddressAllocated True with reason AddressInUse and
 * what gives it back, and a Warning Event whenever that message is new.
 */
export function markAddressInUse(scope: Pick<EndpointScope, 'ctx' | 'endpoint' | 'now'>, message: string): void {
  const before = getCondition(scope.endpoint.status?.conditions, ClusterEndpointConditionTypes.addressAllocated);
  if (before?.reason !== ClusterEndpointReasons.addressInUse || before.message !== message)
    scope.ctx.events.event(scope.endpoint, { type: 'Warning', reason: ClusterEndpointEventReasons.addressInUse, message });
  markEndpointCondition(scope, {
    type: ClusterEndpointConditionTypes.addressAllocated,
    status: 'True',
    reason: ClusterEndpointReasons.addressInUse,
    message,
  });
}

/**
 * The Cluster runs with an endpoint that is not ours: EndpointSet (and the other `types` given)
 * False EndpointAlreadySet, and a Warning Event when EndpointSet newly says so.
 */
export function markEndpointAlreadySet(
  scope: Pick<EndpointScope, 'ctx' | 'endpoint' | 'now'>,
  message: string,
  types: readonly ConditionType[] = [ClusterEndpointConditionTypes.endpointSet],
): void {
  const before = getCondition(scope.endpoint.status?.conditions, ClusterEndpointConditionTypes.endpointSet);
  if (before?.reason !== ClusterEndpointReasons.endpointAlreadySet)
    scope.ctx.events.event(scope.endpoint, { type: 'Warning', reason: ClusterEndpointEventReasons.endpointAlreadySet, message });
  for (const type of types)
    markEndpointCondition(scope, { type, status: 'False', reason: ClusterEndpointReasons.endpointAlreadySet, message });
}

const ORDER = [ClusterEndpointConditionTypes.addressAllocated, ClusterEndpointConditionTypes.endpointSet] as const;

/**
 * Ready: True when both others are; else the first that is not lends its reason and message. An
 * address kept only because it is in use makes Ready False with that reason: what the user acts on.
 */
export function summarizeEndpointReady(scope: Pick<EndpointScope, 'endpoint' | 'now'>): void {
  const conditions = scope.endpoint.status?.conditions;
  const allocated = getCondition(conditions, ClusterEndpointConditionTypes.addressAllocated);
  if (allocated?.reason === ClusterEndpointReasons.addressInUse) {
    const message = allocated.message ?? '';
    markEndpointCondition(scope, { type: ClusterEndpointConditionTypes.ready, status: 'False', reason: allocated.reason, message });
    return;
  }
  for (const type of ORDER) {
    const c = getCondition(conditions, type);
    if (c?.status !== 'True') {
      markEndpointCondition(scope, {
        type: ClusterEndpointConditionTypes.ready,
        status: 'False',
        reason: c?.reason ?? ClusterEndpointReasons.waitingForAddress,
        message: c?.message ?? `${type} not evaluated yet`,
      });
      return;
    }
  }
  markEndpointCondition(scope, {
    type: ClusterEndpointConditionTypes.ready,
    status: 'True',
    reason: ClusterEndpointReasons.ready,
    message: 'address allocated and written into the Cluster',
  });
}
