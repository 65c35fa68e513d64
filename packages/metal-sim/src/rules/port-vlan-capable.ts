import { violation, type RuleViolation } from './rule.js';

export const PORT_VLAN_CAPABLE_RULE = 'port-carries-vlans';

/**
 * Where VLANs can go: a bonded physical port's traffic belongs to its bond (assign to the bond or
 * disbond first), and a bond whose members are all disbonded has no link left to carry them.
 */
export function checkPortCarriesVlans(
  input:
    | { readonly kind: 'physical'; readonly name: string; readonly bonded: boolean }
    | { readonly kind: 'bond'; readonly name: string; readonly activeMembers: number },
): RuleViolation | null {
  if (input.kind === 'physical' && input.bonded) {
    return violation(PORT_VLAN_CAPABLE_RULE, `port ${input.name} is bonded; assign VLANs to its bond or disbond it first`);
  }
  if (input.kind === 'bond' && input.activeMembers === 0) {
    return violation(PORT_VLAN_CAPABLE_RULE, `bond ${input.name} has no bonded ports; assign VLANs to the individual ports`);
  }
  return null;
}
