import { violation, type RuleViolation } from './rule.js';

export const VRF_QUOTA_RULE = 'vrf-quota';

/** Docs: 8 VRFs per project (the limit is a seed setting, this is the check). */
export function checkVrfQuota(input: { readonly existing: number; readonly limit: number }): RuleViolation | null {
  if (input.existing < input.limit) return null;
  return violation(VRF_QUOTA_RULE, `the project already has ${input.existing} VRFs (limit ${input.limit})`);
}
