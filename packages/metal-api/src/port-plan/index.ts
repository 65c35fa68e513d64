// The network-mode planner: pure functions from (device ports, desired ports) to Metal API calls.

export { planPortChanges } from './plan.js';
export type { PortPlan, PortPlanInput } from './plan.js';
export { describePortCall } from './calls.js';
export type { PortCall, PortCallTarget, PlannedVlanAssignment } from './calls.js';
export { resolveDesired } from './desired.js';
export type { DesiredPort, ResolveContext } from './desired.js';
export { PORT_PLAN_ISSUE_CODES } from './issues.js';
export type { PortPlanIssue, PortPlanIssueCode } from './issues.js';
export { deriveNetworkType, NETWORK_TYPES } from './network-type.js';
export type { NetworkType, PortShape } from './network-type.js';
export { observePorts } from './port-state.js';
export type { ObservedPort, PortSettings, VlanRef } from './port-state.js';
