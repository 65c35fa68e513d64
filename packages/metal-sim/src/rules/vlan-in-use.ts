import { violation, type RuleViolation } from './rule.js';

export const VLAN_IN_USE_RULE = 'vlan-delete-in-use';

/** A VLAN that a port, a Metal Gateway or a pending batch still uses cannot be deleted. */
export function checkVlanDeletable(input: {
  readonly vxlan: number;
  readonly assignedPorts: readonly string[];
  readonly metalGatewayIds: readonly string[];
  readonly openBatchIds: readonly string[];
}): RuleViolation | null {
  const uses: string[] = [];
  if (input.assignedPorts.length > 0) uses.push(`assigned to ports ${input.assignedPorts.join(', ')}`);
  if (input.metalGatewayIds.length > 0) uses.push(`used by Metal Gateway ${input.metalGatewayIds.join(', ')}`);
  if (input.openBatchIds.length > 0) uses.push(`named by pending batch ${input.openBatchIds.join(', ')}`);
  if (uses.length === 0) return null;
  return violation(VLAN_IN_USE_RULE, `virtual network ${input.vxlan} is in use: ${uses.join('; ')}`);
}
