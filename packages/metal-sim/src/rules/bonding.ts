import { violation, type RuleViolation } from './rule.js';

export const BOND_STATE_RULE = 'bond-state';
export const DISBOND_STATE_RULE = 'disbond-state';

/** A physical port as the bond rules see it. */
export interface MemberView {
  readonly name: string;
  readonly bonded: boolean;
  /** Ports the bond carries L3 on keep their first member (eth0): "bond port in Layer3 can't be unbonded". */
  readonly isPrimary: boolean;
  readonly vlanCount: number;
}

/**
 * Bonding ports back: at least one of them must be out of the bond, and none may still carry VLANs
 * (every documented path back to a bond unassigns the port's VLANs first).
 */
export function checkBond(input: { readonly port: string; readonly targets: readonly MemberView[] }): RuleViolation | null {
  const toBond = input.targets.filter((t) => !t.bonded);
  if (toBond.length === 0) return violation(BOND_STATE_RULE, `port ${input.port} is already bonded`);
  const withVlans = toBond.filter((t) => t.vlanCount > 0).map((t) => t.name);
  if (withVlans.length > 0) {
    return violation(BOND_STATE_RULE, `unassign the VLANs of ${withVlans.join(', ')} before bonding`);
  }
  return null;
}

/**
 * Disbonding: at least one target is still bonded; a layer-3 bond keeps its primary member (only
 * eth1 leaves in hybrid mode); leaving nothing in a layer-2 bond that still has VLANs would strand them.
 */
export function checkDisbond(input: {
  readonly port: string;
  readonly bondName: string;
  readonly bondLayer2: boolean;
  readonly bondVlanCount: number;
  readonly targets: readonly MemberView[];
  /** Members that stay bonded after this call. */
  readonly remainingBonded: number;
}): RuleViolation | null {
  const toDisbond = input.targets.filter((t) => t.bonded);
  if (toDisbond.length === 0) return violation(DISBOND_STATE_RULE, `port ${input.port} is already disbonded`);
  if (!input.bondLayer2) {
    const primary = toDisbond.find((t) => t.isPrimary);
    if (primary !== undefined) {
      return violation(
        DISBOND_STATE_RULE,
        `${input.bondName} is in layer 3: ${primary.name} cannot leave the bond (convert ${input.bondName} to layer 2 first)`,
      );
    }
  }
  if (input.remainingBonded === 0 && input.bondVlanCount > 0) {
    return violation(DISBOND_STATE_RULE, `unassign the VLANs of ${input.bondName} before disbonding all of its ports`);
  }
  return null;
}
