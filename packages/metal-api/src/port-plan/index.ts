// The network-mode planner: pure functions from (device ports, desired ports) to Metal API calls.

export { planPortChanges } from './plan.js';
export type { PortPlan, PortPlanInput } from './plan.js';
export { describePortCall } from './plan.js';
export type { PortCall, PortCallTarget, PlannedVlanAssignment } from './plan.js';
export { resolveDesired } from './desired.js';
export type { DesiredPort, ResolveContext } from './desired.js';
export { PORT_PLAN_ISSUE_CODES } from './port-layout.js';
export type { PortPlanIssue, PortPlanIssueCode } from './port-layout.js';
export { deriveNetworkType } from './port-layout.js';
export {
  desiredNetworkType,
  effectivePorts,
  FOUR_PORT_ONLY,
  isBondName,
  PORT_LAYOUTS,
  portCountOf,
  portNamesOf,
  settleDefaults,
} from './port-layout.js';
export type { EffectivePort, PortCount } from './port-layout.js';
export type { NetworkType, PortShape } from './port-layout.js';
export { portCelRules } from './port-rules.js';
export type { RuleScope } from './port-rules.js';
export { observePorts } from './port-state.js';
export type { ObservedPort, PortSettings, VlanRef } from './port-state.js';
