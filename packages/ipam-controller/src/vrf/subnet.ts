import {
  formatAddress,
  formatCidr,
  parseAddress,
  rangeOfPrefix,
  type AddressRange,
  type IPFamily,
  type ResolvedPool,
} from '@metal-l2/ipam-core';

// The pool subnet as Metal sees it: one VRF IP reservation (network + cidr) carved from the VRF's
// ranges. Pure; shared by the webhook (early, readable refusals) and the VRF steps (the check
// against an adopted VRF's real ranges, which only the controller can read).

/** The pool subnet in the form a VRF IP reservation takes. */
export interface PoolSubnet {
  readonly family: IPFamily;
  /** Canonical network address, e.g. `10.60.1.0`. */
  readonly network: string;
  readonly cidr: number;
  /** `10.60.1.0/24`. */
  readonly text: string;
  readonly range: AddressRange;
}

export function poolSubnet(pool: ResolvedPool): PoolSubnet {
  const network = formatAddress({ family: pool.family, value: pool.subnet.start });
  return {
    family: pool.family,
    network,
    cidr: pool.prefix,
    text: formatCidr({ family: pool.family, value: pool.subnet.start }, pool.prefix),
    range: pool.subnet,
  };
}

/** Metal reserves VRF subnets of /22-/29 (IPv4) and /64 (IPv6) only (VrfIpReservationCreateInput). */
export const VRF_RESERVATION_PREFIXES: Readonly<Record<IPFamily, { readonly min: number; readonly max: number }>> = {
  4: { min: 22, max: 29 },
  6: { min: 64, max: 64 },
};

/** Why Metal would refuse to reserve this subnet for its size, or undefined when it fits. */
export function reservationSizeProblem(subnet: Pick<PoolSubnet, 'family' | 'cidr'>): string | undefined {
  const { min, max } = VRF_RESERVATION_PREFIXES[subnet.family];
  if (subnet.cidr >= min && subnet.cidr <= max) return undefined;
  const allowed = min === max ? `/${min}` : `/${min} to /${max}`;
  return `a VRF reservation of IPv${subnet.family} must be ${allowed}, and the pool prefix is /${subnet.cidr}`;
}

/** Parses `10.0.0.0/16`; undefined for anything else (host bits are masked, as Metal refuses them anyway). */
export function parseCidrRange(text: string): { readonly family: IPFamily; readonly range: AddressRange } | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return undefined;
  const address = parseAddress(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (address === undefined || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > (address.family === 4 ? 32 : 128)) return undefined;
  return { family: address.family, range: rangeOfPrefix(address, prefix) };
}

/** True when the subnet lies wholly inside one of the ranges (a reservation cannot straddle two). */
export function isSubnetInRanges(subnet: Pick<PoolSubnet, 'family' | 'range'>, ranges: readonly string[]): boolean {
  return ranges.some((text) => {
    const parsed = parseCidrRange(text);
    return (
      parsed !== undefined &&
      parsed.family === subnet.family &&
      parsed.range.start <= subnet.range.start &&
      subnet.range.end <= parsed.range.end
    );
  });
}

/**
 * The address a Metal Gateway takes when the API does not name it: the first usable address of
 * the reservation (the simulator and Metal's documentation agree on this).
 */
export function firstUsableAddress(subnet: Pick<PoolSubnet, 'family' | 'range'>): string {
  return formatAddress({ family: subnet.family, value: subnet.range.start + 1n });
}

/** `10.0.0.1/24` or `10.0.0.1` → the canonical address, or undefined. */
export function addressOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const parsed = parseAddress(text.split('/')[0] ?? '');
  return parsed === undefined ? undefined : formatAddress(parsed);
}

/** Whether a reservation's network/cidr is the pool subnet (spellings differ: compare parsed). */
export function isSameSubnet(
  subnet: PoolSubnet,
  reservation: { readonly network?: string | undefined; readonly cidr?: number | undefined },
): boolean {
  return reservation.cidr === subnet.cidr && addressOf(reservation.network) === subnet.network;
}
