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

/** Whether a host in this mode still has its layer-3 addresses (and so the metadata service). */
export function keepsLayer3(t: NetworkType): boolean {
  return t === 'layer3' || t === 'hybrid' || t === 'hybrid-bonded';
}
