import { violation, type RuleViolation } from './rule.js';

export const VXLAN_RANGE_RULE = 'vxlan-range';

/** Spec (VirtualNetworkCreateInput.vxlan): "VLAN ID between 2-3999". */
export function checkVxlanRange(vxlan: number): RuleViolation | null {
  if (Number.isInteger(vxlan) && vxlan >= 2 && vxlan <= 3999) return null;
  return violation(VXLAN_RANGE_RULE, `vxlan ${vxlan} is out of range: must be between 2 and 3999`);
}
