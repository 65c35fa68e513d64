import { createHash } from 'node:crypto';
import type { MachineNetworkSpec, NetworkPoolRef } from '@metal-l2/api';

/** One IPAddressClaim the machine needs: a (port, VLAN, pool entry) of its spec. */
export interface WantedClaim {
  readonly name: string;
  readonly port: string;
  readonly vxlan: number;
  /** Position among the VLAN's addressesFromPools: a pool listed twice gives two claims. */
  readonly index: number;
  readonly poolRef: NetworkPoolRef;
}

const MAX_NAME = 253;
const HASH_LENGTH = 8;

/**
 * `<packetmachine>-<port>-v<vxlan>-<n>`: named by meaning, not list position across VLANs, so a
 * name says what the address is for. Names too long for an object name keep a readable prefix
 * and end in a hash of the whole, so two machines never share a claim.
 */
export function claimName(machine: string, at: { port: string; vxlan: number; index: number }): string {
  const full = `${machine}-${at.port}-v${at.vxlan}-${at.index}`;
  if (full.length <= MAX_NAME) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, HASH_LENGTH);
  return `${full.slice(0, MAX_NAME - HASH_LENGTH - 1).replace(/[-.]+$/, '')}-${hash}`;
}

/** Every claim the spec asks for, in spec order (ports, then VLANs, then pool entries). */
export function wantedClaims(machine: string, spec: Pick<MachineNetworkSpec, 'ports'>): WantedClaim[] {
  const claims: WantedClaim[] = [];
  for (const port of spec.ports) {
    for (const vlan of port.vlans ?? []) {
      (vlan.addressesFromPools ?? []).forEach((poolRef, index) => {
        claims.push({
          name: claimName(machine, { port: port.name, vxlan: vlan.vxlan, index }),
          port: port.name,
          vxlan: vlan.vxlan,
          index,
          poolRef,
        });
      });
    }
  }
  return claims;
}
