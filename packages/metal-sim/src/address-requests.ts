// The addresses a call asks for: `ip_addresses` of a device create and `request_ips` of a layer-3
// conversion read alike, so both routes share this reader.

import { unprocessable } from './errors.js';
import { optBoolean, optInteger, type Fields } from './input.js';
import type { AddressRequest } from './store.js';

/** The default the spec gives `ip_addresses`: public IPv4, private IPv4, public IPv6. */
export const DEFAULT_ADDRESSES: readonly AddressRequest[] = [
  { family: 4, public: true, prefix: 31 },
  { family: 4, public: false, prefix: 31 },
  { family: 6, public: true, prefix: 127 },
];

export function readAddressRequests(list: readonly Fields[] | undefined, opts: { readonly requirePrivate: boolean }): AddressRequest[] {
  if (list === undefined) return [...DEFAULT_ADDRESSES];
  const out = list.map((f): AddressRequest => {
    // Addresses from chosen reservations are not modelled; ignoring the field would hand out others.
    if (f['ip_reservations'] !== undefined) throw unprocessable('ip_addresses[].ip_reservations is not offered by this simulator');
    const family = optInteger(f, 'address_family') ?? 4;
    if (family !== 4 && family !== 6) throw unprocessable('address_family must be 4 or 6');
    const isPublic = optBoolean(f, 'public') ?? true;
    if (family === 6 && !isPublic) throw unprocessable('private IPv6 addresses are not offered');
    const [min, max] = family === 4 ? [28, 31] : [124, 127];
    const prefix = optInteger(f, 'cidr') ?? max;
    if (prefix < min || prefix > max) throw unprocessable(`cidr for IPv${family} must be between ${min} and ${max}`);
    return { family, public: isPublic, prefix };
  });
  if (opts.requirePrivate && !out.some((a) => a.family === 4 && !a.public)) {
    throw unprocessable('a private IPv4 address is required');
  }
  return out;
}
