// The composite network type of a machine, derived from its ports, the way the Metal console and
// packngo's Device.GetNetworkType name it. Used for observed ports and for desired ports alike,
// so the type is never written down twice.

import type { PortNetworkType } from '../types.js';

/** One of the five network types of an Equinix Metal server (PORT_NETWORK_TYPES, the API's enum). */
export type NetworkType = PortNetworkType;

/** What the derivation needs to know about a port. */
export interface PortShape {
  /** A bond port (`NetworkBondPort`, bond0) rather than a physical one. */
  isBond: boolean;
  bonded: boolean;
  /** Meaningful on bond ports only. */
  layer2: boolean;
  vlanCount: number;
}

/**
 * - every bond port in layer 2: layer2-bonded when every port is bonded, else layer2-individual;
 * - every bond port in layer 3: hybrid when a port left its bond, else hybrid-bonded when a bond
 *   port carries VLANs, else layer3;
 * - layer 2 and layer 3 bonds side by side (4-port plans): hybrid.
 * Undefined without any bond port: there is nothing to name.
 */
export function deriveNetworkType(ports: readonly PortShape[]): NetworkType | undefined {
  const bonds = ports.filter((p) => p.isBond);
  if (bonds.length === 0) return undefined;
  const allBonded = ports.every((p) => p.bonded);
  if (bonds.every((b) => b.layer2)) return allBonded ? 'layer2-bonded' : 'layer2-individual';
  if (bonds.some((b) => b.layer2)) return 'hybrid';
  if (!allBonded) return 'hybrid';
  return bonds.some((b) => b.vlanCount > 0) ? 'hybrid-bonded' : 'layer3';
}
