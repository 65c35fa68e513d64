import { ClusterEndpointConditionTypes, ClusterEndpointReasons } from '@metal-l2/api';
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

const ORDER = [ClusterEndpointConditionTypes.addressAllocated, ClusterEndpointConditionTypes.endpointSet] as const;

/** Ready: True when both others are; else the first that is not lends its reason and message. */
export function summarizeEndpointReady(scope: Pick<EndpointScope, 'endpoint' | 'now'>): void {
  const conditions = scope.endpoint.status?.conditions;
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
