import { violation, type RuleViolation } from './rule.js';

export const ONE_GATEWAY_PER_VLAN_RULE = 'one-metal-gateway-per-vlan';
export const GATEWAY_METRO_RULE = 'metal-gateway-same-metro';
export const GATEWAY_RESERVATION_RULE = 'metal-gateway-reservation';
export const GATEWAY_PRIVATE_SIZE_RULE = 'metal-gateway-private-subnet-size';

/** Docs: a VLAN has at most one Metal Gateway. */
export function checkOneGatewayPerVlan(input: {
  readonly vxlan: number;
  readonly existingGatewayIds: readonly string[];
}): RuleViolation | null {
  if (input.existingGatewayIds.length === 0) return null;
  return violation(
    ONE_GATEWAY_PER_VLAN_RULE,
    `virtual network ${input.vxlan} already has a Metal Gateway (${input.existingGatewayIds.join(', ')})`,
  );
}

/** Spec (VrfMetalGatewayCreateInput): "the VRF IP Reservation and the Virtual Network must reside in the same Metro". */
export function checkGatewaySameMetro(input: { readonly vlanMetro: string; readonly reservationMetro: string }): RuleViolation | null {
  if (input.vlanMetro.toLowerCase() === input.reservationMetro.toLowerCase()) return null;
  return violation(
    GATEWAY_METRO_RULE,
    `the virtual network (metro ${input.vlanMetro}) and the IP reservation (metro ${input.reservationMetro}) must be in the same metro`,
  );
}

/**
 * The reservation behind a gateway: not already serving another gateway, and for public blocks a
 * /29 to /25 (docs: Metal Gateway public blocks are /29-/25).
 */
export function checkGatewayReservation(input: {
  readonly type: string;
  readonly prefix: number;
  readonly family: 4 | 6;
  readonly usedByGatewayId: string | undefined;
}): RuleViolation | null {
  if (input.usedByGatewayId !== undefined) {
    return violation(GATEWAY_RESERVATION_RULE, `the IP reservation already belongs to Metal Gateway ${input.usedByGatewayId}`);
  }
  if (input.type === 'vrf') return null;
  if (input.type !== 'public_ipv4' && input.type !== 'private_ipv4') {
    return violation(GATEWAY_RESERVATION_RULE, `a ${input.type} reservation cannot back a Metal Gateway`);
  }
  if (input.family !== 4 || input.prefix < 25 || input.prefix > 29) {
    return violation(GATEWAY_RESERVATION_RULE, `a Metal Gateway needs a /29 to /25 IPv4 block, not /${input.prefix}`);
  }
  return null;
}

/** Spec (MetalGatewayCreateInput.private_ipv4_subnet_size): 8, 16, 32, 64 or 128. */
export function checkPrivateSubnetSize(size: number): RuleViolation | null {
  if ([8, 16, 32, 64, 128].includes(size)) return null;
  return violation(GATEWAY_PRIVATE_SIZE_RULE, `private_ipv4_subnet_size must be one of 8, 16, 32, 64, 128 (got ${size})`);
}
