// The Metal simulator's live port state → the switch's port configuration. Pure: reads a snapshot
// shaped like the simulator store's maps (structurally: this package does not import metal-sim).
//
// A physical port bonded to its bond takes the bond's configuration and joins the bond's LAG:
// untagged frames go to the bond's native VLAN, else to the public segment while the bond is in
// layer 3 (layer3, hybrid-bonded), else nowhere (layer2-bonded without a native VLAN); tagged
// frames to the bond's VLANs. A physical port out of its bond (hybrid, layer2-individual) is a
// layer-2 access/trunk port with its own VLANs and native VLAN.
import { PUBLIC_SEGMENT, type Segment, type SwitchPortConfig } from './forwarding.js';

/** The fields of a simulator port the switch follows. */
export interface MetalPortState {
  readonly id: string;
  readonly deviceId: string;
  readonly name: string;
  readonly kind: 'bond' | 'physical';
  readonly bondName: string;
  readonly mac: string | undefined;
  readonly bonded: boolean;
  readonly layer2: boolean;
  readonly vlans: readonly { readonly vlanId: string }[];
  readonly nativeVlanId: string | undefined;
}

export interface MetalNetworkState {
  readonly ports: ReadonlyMap<string, MetalPortState>;
  readonly vlans: ReadonlyMap<string, { readonly vxlan: number }>;
}

/** A physical port's configuration on the switch (without `up`, which the switch knows). */
export type PortConfig = Omit<SwitchPortConfig, 'up'>;

export function switchPortConfig(state: MetalNetworkState, portId: string): PortConfig | undefined {
  const port = state.ports.get(portId);
  if (port === undefined || port.kind !== 'physical') return undefined;
  const vxlan = (vlanId: string | undefined): number | undefined => (vlanId === undefined ? undefined : state.vlans.get(vlanId)?.vxlan);
  const vxlans = (p: MetalPortState): number[] =>
    p.vlans
      .map((v) => vxlan(v.vlanId))
      .filter((v): v is number => v !== undefined)
      .sort((a, b) => a - b);
  if (port.bonded) {
    const bond = [...state.ports.values()].find((p) => p.deviceId === port.deviceId && p.kind === 'bond' && p.name === port.bondName);
    if (bond !== undefined) {
      const native = vxlan(bond.nativeVlanId);
      const untagged: Segment | undefined = native ?? (bond.layer2 ? undefined : PUBLIC_SEGMENT);
      return { id: port.id, group: bond.id, untagged, tagged: vxlans(bond) };
    }
  }
  return { id: port.id, group: port.id, untagged: vxlan(port.nativeVlanId), tagged: vxlans(port) };
}
