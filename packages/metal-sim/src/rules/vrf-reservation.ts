import { containsCidr, formatCidr, isAligned, overlaps, parseAddress, parseCidr, type Cidr } from '../ip-math.js';
import { violation, type RuleViolation } from './rule.js';

export const VRF_RESERVATION_SIZE_RULE = 'vrf-reservation-size';
export const VRF_RESERVATION_IN_RANGE_RULE = 'vrf-reservation-in-range';
export const VRF_RESERVATION_OVERLAP_RULE = 'vrf-reservation-overlap';

/**
 * Spec (VrfIpReservationCreateInput): cidr "IPv4: between 22 - 29 inclusive, IPv6: exactly 64";
 * "The VRF must have an existing IP Range that contains the requested subnet". Two reservations of
 * one VRF may not overlap.
 */
export function checkVrfReservation(input: {
  readonly network: string;
  readonly cidr: number;
  readonly vrfRanges: readonly string[];
  /** The VRF's existing reservations as CIDR strings. */
  readonly existing: readonly string[];
}): RuleViolation | null {
  const addr = parseAddress(input.network);
  if (addr === undefined) return violation(VRF_RESERVATION_SIZE_RULE, `network ${input.network} is not an IP address`);
  const ok = addr.family === 4 ? input.cidr >= 22 && input.cidr <= 29 : input.cidr === 64;
  if (!ok) {
    const allowed = addr.family === 4 ? 'between /22 and /29' : 'exactly /64';
    return violation(VRF_RESERVATION_SIZE_RULE, `a VRF IPv${addr.family} reservation must be ${allowed}, not /${input.cidr}`);
  }
  const wanted: Cidr = { family: addr.family, network: addr.value, prefix: input.cidr };
  const text = formatCidr(wanted);
  if (!isAligned(wanted)) return violation(VRF_RESERVATION_SIZE_RULE, `${text} is not a network address (host bits set)`);
  const inside = input.vrfRanges.some((r) => {
    const range = parseCidr(r);
    return range !== undefined && containsCidr(range, wanted);
  });
  if (!inside) {
    return violation(
      VRF_RESERVATION_IN_RANGE_RULE,
      `${text} is not inside any of the VRF's ip ranges (${input.vrfRanges.join(', ') || 'none'})`,
    );
  }
  const clash = input.existing.find((e) => {
    const other = parseCidr(e);
    return other !== undefined && overlaps(other, wanted);
  });
  if (clash !== undefined) return violation(VRF_RESERVATION_OVERLAP_RULE, `${text} overlaps the VRF's reservation ${clash}`);
  return null;
}
