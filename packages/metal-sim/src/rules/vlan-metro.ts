import { violation, type RuleViolation } from './rule.js';

export const VLAN_METRO_RULE = 'vlan-metro-local';

/** Docs: "VLANs are metro-local": a port can only join a VLAN of its device's metro. */
export function checkVlanInDeviceMetro(input: {
  readonly vxlan: number;
  readonly vlanMetro: string;
  readonly deviceMetro: string;
}): RuleViolation | null {
  if (input.vlanMetro.toLowerCase() === input.deviceMetro.toLowerCase()) return null;
  return violation(
    VLAN_METRO_RULE,
    `virtual network ${input.vxlan} is in metro ${input.vlanMetro} but the device is in metro ${input.deviceMetro}; VLANs are metro-local`,
  );
}
