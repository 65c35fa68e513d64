import { violation, type RuleViolation } from './rule.js';

export const NETWORK_FROZEN_RULE = 'network-frozen';

/**
 * Spec (Device.network_frozen): "this instance can not be converted to a different network type".
 * Assigning a VLAN changes the type too (layer3 -> hybrid-bonded), so every port change is refused.
 */
export function checkNetworkNotFrozen(input: { readonly hostname: string; readonly networkFrozen: boolean }): RuleViolation | null {
  if (!input.networkFrozen) return null;
  return violation(
    NETWORK_FROZEN_RULE,
    `the network of device ${input.hostname} is frozen (network_frozen is true); unfreeze it before changing ports`,
  );
}
