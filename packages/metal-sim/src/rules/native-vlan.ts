import { violation, type RuleViolation } from './rule.js';

export const NATIVE_VLAN_ASSIGNED_RULE = 'native-vlan-assigned';
export const NATIVE_VLAN_PORT_MODE_RULE = 'native-vlan-port-mode';

/** Docs: the native VLAN "must already be assigned" to the port. */
export function checkNativeVlanAssigned(input: {
  readonly port: string;
  readonly vxlan: number;
  readonly assignedVxlans: readonly number[];
}): RuleViolation | null {
  if (input.assignedVxlans.includes(input.vxlan)) return null;
  return violation(
    NATIVE_VLAN_ASSIGNED_RULE,
    `virtual network ${input.vxlan} must be assigned to port ${input.port} before it can be its native VLAN`,
  );
}

/** Docs (hybrid bonded): tagged traffic only, no native VLAN on a bond that still carries layer 3. */
export function checkNativeVlanPortMode(input: {
  readonly port: string;
  readonly kind: 'bond' | 'physical';
  readonly layer2: boolean;
}): RuleViolation | null {
  if (input.kind === 'physical' || input.layer2) return null;
  return violation(NATIVE_VLAN_PORT_MODE_RULE, `bond ${input.port} is in layer 3 (hybrid bonded): only tagged VLANs, no native VLAN`);
}
