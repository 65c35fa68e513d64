import { violation, type RuleViolation } from './rule.js';

export const VXLAN_UNIQUE_RULE = 'vxlan-unique-per-project-metro';

/** Spec: the vxlan "must be unique for the project within the Metro". */
export function checkVxlanUnique(input: {
  readonly vxlan: number;
  readonly metro: string;
  /** The project's existing VLANs. */
  readonly existing: readonly { readonly vxlan: number; readonly metro: string }[];
}): RuleViolation | null {
  const clash = input.existing.some((v) => v.vxlan === input.vxlan && v.metro.toLowerCase() === input.metro.toLowerCase());
  if (!clash) return null;
  return violation(VXLAN_UNIQUE_RULE, `vxlan ${input.vxlan} is already in use in metro ${input.metro} for this project`);
}
