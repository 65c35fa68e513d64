// Pieces every renderer uses: hrefs in the API's style and the metro object.

import { API_PREFIX } from '../http.js';
import { familyBits, formatAddress, netmask, type AddressFamily } from '../ip-math.js';
import type { Metro } from '../models.js';
import type { HrefWire, MetroWire } from '../wire.js';

export type Collection =
  | 'devices'
  | 'ports'
  | 'projects'
  | 'virtual-networks'
  | 'vrfs'
  | 'ips'
  | 'metal-gateways'
  | 'events'
  | 'locations/metros'
  | 'plans'
  | 'batches'
  | 'bgp/sessions'
  | 'bgp-configs';

export function hrefOf(collection: Collection, id: string): string {
  return `${API_PREFIX}/${collection}/${id}`;
}

export function link(collection: Collection, id: string): HrefWire {
  return { href: hrefOf(collection, id) };
}

export function renderMetro(m: Metro): MetroWire {
  return { id: m.id, code: m.code, name: m.name, country: m.country, href: hrefOf('locations/metros', m.id) };
}

/** Network, netmask, gateway and first host of a block, as the API shows addresses. */
export function blockFacts(
  family: AddressFamily,
  network: bigint,
  prefix: number,
): {
  network: string;
  netmask: string;
  gateway: string;
  address: string;
} {
  const hostBits = familyBits(family) - prefix;
  // A /31 (/127) is a point-to-point pair: the switch side is the network address, the host the
  // other one. Larger blocks keep the network address aside: gateway first, host second.
  const gateway = hostBits <= 1 ? network : network + 1n;
  const address = hostBits === 0 ? network : hostBits === 1 ? network + 1n : network + 2n;
  return {
    network: formatAddress(family, network),
    netmask: netmask(family, prefix),
    gateway: formatAddress(family, gateway),
    address: formatAddress(family, address),
  };
}
