import { violation, type RuleViolation } from './rule.js';

export const VLAN_ASSIGNMENT_STATE_RULE = 'vlan-assignment-state';

/** Assigning a VLAN the port already has, or removing one it does not have, is refused. */
export function checkAssignmentChange(input: {
  readonly port: string;
  readonly vxlan: number;
  readonly want: 'assigned' | 'unassigned';
  readonly isAssigned: boolean;
}): RuleViolation | null {
  if (input.want === 'assigned' && input.isAssigned) {
    return violation(VLAN_ASSIGNMENT_STATE_RULE, `virtual network ${input.vxlan} is already assigned to port ${input.port}`);
  }
  if (input.want === 'unassigned' && !input.isAssigned) {
    return violation(VLAN_ASSIGNMENT_STATE_RULE, `virtual network ${input.vxlan} is not assigned to port ${input.port}`);
  }
  return null;
}
