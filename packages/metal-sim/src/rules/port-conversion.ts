import { violation, type RuleViolation } from './rule.js';

export const CONVERT_BOND_ONLY_RULE = 'convert-bond-port-only';
export const CONVERT_LAYER2_STATE_RULE = 'convert-layer2-state';
export const CONVERT_LAYER3_STATE_RULE = 'convert-layer3-state';
export const LAYER3_NEEDS_NO_VLANS_RULE = 'layer3-needs-vlans-unassigned';

interface BondView {
  readonly name: string;
  readonly kind: 'bond' | 'physical';
  readonly layer2: boolean;
}

function bondOnly(p: BondView): RuleViolation | null {
  if (p.kind === 'bond') return null;
  return violation(CONVERT_BOND_ONLY_RULE, `port ${p.name} is not a bond port; only bond ports change between layer 2 and layer 3`);
}

/** Converting to layer 2: a bond port that is currently layer 3. */
export function checkConvertLayer2(p: BondView): RuleViolation | null {
  const notBond = bondOnly(p);
  if (notBond !== null) return notBond;
  if (p.layer2) return violation(CONVERT_LAYER2_STATE_RULE, `bond ${p.name} is already in layer 2`);
  return null;
}

/**
 * Converting to layer 3: a layer-2 bond port, every member bonded (a bond "in Layer3 can't be
 * unbonded"), and, as the API reference says, "VLANs must first be unassigned" from the bond and
 * its members.
 */
export function checkConvertLayer3(
  p: BondView & {
    readonly unbondedMembers: readonly string[];
    readonly assignedVxlans: readonly number[];
  },
): RuleViolation | null {
  const notBond = bondOnly(p);
  if (notBond !== null) return notBond;
  if (!p.layer2) return violation(CONVERT_LAYER3_STATE_RULE, `bond ${p.name} is already in layer 3`);
  if (p.assignedVxlans.length > 0) {
    return violation(
      LAYER3_NEEDS_NO_VLANS_RULE,
      `VLANs must be unassigned before converting ${p.name} to layer 3 (still assigned: ${p.assignedVxlans.join(', ')})`,
    );
  }
  if (p.unbondedMembers.length > 0) {
    return violation(
      CONVERT_LAYER3_STATE_RULE,
      `bond ${p.name} must be bonded before converting to layer 3 (unbonded: ${p.unbondedMembers.join(', ')})`,
    );
  }
  return null;
}
