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
/** Label values are limited to 63 characters (and must start and end with a letter or digit). */
const MAX_LABEL_VALUE = 63;
const HASH_LENGTH = 8;

/** At most `max` characters: the value itself when it fits, else a readable prefix and a hash of the whole. */
function shortened(value: string, max: number): string {
  if (value.length <= max) return value;
  const hash = createHash('sha256').update(value).digest('hex').slice(0, HASH_LENGTH);
  return `${value.slice(0, max - HASH_LENGTH - 1).replace(/[-.]+$/, '')}-${hash}`;
}

/**
 * An object name as a label value: names go up to 253 characters, label values to 63, so a
 * longer name is shortened with a hash of the whole (two names never share a value). Every label
 * this controller writes from a name goes through here.
 */
export function nameLabelValue(name: string): string {
  return shortened(name, MAX_LABEL_VALUE);
}

/**
 * `<packetmachine>-<port>-v<vxlan>-<n>`: named by meaning, not list position across VLANs, so a
 * name says what the address is for. Names too long for an object name keep a readable prefix
 * and end in a hash of the whole, so two machines never share a claim.
 */
export function claimName(machine: string, at: { port: string; vxlan: number; index: number }): string {
  return shortened(`${machine}-${at.port}-v${at.vxlan}-${at.index}`, MAX_NAME);
}

/** `<cluster>-endpoint`: the one claim of a Cluster's control-plane endpoint (same shortening rule). */
export function endpointClaimName(cluster: string): string {
  return shortened(`${cluster}-endpoint`, MAX_NAME);
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
