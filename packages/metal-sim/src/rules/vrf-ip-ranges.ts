import { formatCidr, isAligned, overlaps, parseCidr, type Cidr } from '../ip-math.js';
import { violation, type RuleViolation } from './rule.js';

export const VRF_IP_RANGES_RULE = 'vrf-ip-ranges';

/**
 * Spec (VrfCreateInput.ip_ranges): "IPv4 blocks must be between /8 and /29 in size. IPv6 blocks
 * must be between /59 and /64." Ranges must also be network addresses and must not overlap.
 */
export function checkVrfIpRanges(ranges: readonly string[]): RuleViolation | null {
  const parsed: Cidr[] = [];
  for (const text of ranges) {
    const c = parseCidr(text);
    if (c === undefined) return violation(VRF_IP_RANGES_RULE, `ip range ${text} is not a CIDR network address`);
    const [min, max] = c.family === 4 ? [8, 29] : [59, 64];
    if (c.prefix < min || c.prefix > max) {
      return violation(VRF_IP_RANGES_RULE, `ip range ${text}: IPv${c.family} blocks must be between /${min} and /${max}`);
    }
    if (!isAligned(c)) return violation(VRF_IP_RANGES_RULE, `ip range ${text} is not a network address (host bits set)`);
    const clash = parsed.find((p) => overlaps(p, c));
    if (clash !== undefined) return violation(VRF_IP_RANGES_RULE, `ip ranges ${formatCidr(clash)} and ${text} overlap`);
    parsed.push(c);
  }
  return null;
}
