// The composite network type the API reports. It is derived, never stored: from the bond's layer-2
// flag, which members are bonded, and whether the bond carries VLANs (packngo's
// Device.GetNetworkType, refined by packngo#231 for hybrid-bonded).

export type NetworkType = 'layer3' | 'hybrid' | 'hybrid-bonded' | 'layer2-bonded' | 'layer2-individual';

export interface BondShape {
  readonly layer2: boolean;
  readonly membersBonded: readonly boolean[];
  readonly bondVlanCount: number;
}

export function bondNetworkType(b: BondShape): NetworkType {
  const allBonded = b.membersBonded.every((x) => x);
  if (b.layer2) return allBonded ? 'layer2-bonded' : 'layer2-individual';
  if (!allBonded) return 'hybrid';
  return b.bondVlanCount > 0 ? 'hybrid-bonded' : 'layer3';
}

/**
 * The device's type over all of its bonds (one on 2-port plans, two on 4-port plans): a single bond
 * is its own type; two bonds in the same mode agree on it (hybrid-bonded if either carries VLANs);
 * a layer-2 bond beside a layer-3 one, or a layer-3 bond with a port out, is hybrid (the Metal
 * console's name for "some layer 3, some layer 2"; packngo's Device.GetNetworkType reads ports the
 * same way).
 */
export function deviceNetworkType(bonds: readonly BondShape[]): NetworkType {
  const types = bonds.map(bondNetworkType);
  const [first] = types;
  if (first === undefined) throw new Error('internal: a device without a bond has no network type');
  if (types.every((t) => t === first)) return first;
  if (bonds.every((b) => b.layer2)) return 'layer2-individual';
  if (bonds.every((b) => !b.layer2) && types.every((t) => t === 'layer3' || t === 'hybrid-bonded')) return 'hybrid-bonded';
  return 'hybrid';
}

/** Whether a host in this mode still has its layer-3 addresses (and so the metadata service). */
export function keepsLayer3(t: NetworkType): boolean {
  return t === 'layer3' || t === 'hybrid' || t === 'hybrid-bonded';
}
