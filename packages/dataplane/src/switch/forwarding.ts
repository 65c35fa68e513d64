// The switch's forwarding rules, as a pure function of the ports' configuration: a frame that
// enters port X untagged or with tag T leaves on ports Y, each untagged or with tag U.
//
// A port's configuration mirrors the Metal API (see port-state.ts): its untagged segment (the
// layer-3 "public" segment of a layer-3 or hybrid-bonded bond, or its native VLAN), the VLANs it
// carries tagged, and its link group: the members of a bond form one static LAG (the guest bonds in
// balance-xor), every other port is a group of its own. A frame never leaves through the group it
// came in by, and leaves a LAG through one member only. The switch floods (no MAC learning):
// guests' NICs drop unicast not meant for them.

/** The untagged "public" segment: what a layer-3 bond's addresses live on. */
export const PUBLIC_SEGMENT = 'public';

/** A segment: the public layer-3 segment or a VLAN, by its VLAN id on the wire (Metal's vxlan). */
export type Segment = typeof PUBLIC_SEGMENT | number;

export interface SwitchPortConfig {
  /** The switch port (the Metal port id of the server NIC plugged into it). */
  readonly id: string;
  /** Ports with the same group are one LAG (a bond's bonded members); else the port's own id. */
  readonly group: string;
  /** Where untagged frames go: the public segment, a native VLAN, or nowhere (dropped). */
  readonly untagged: Segment | undefined;
  /** VLANs carried tagged (a native VLAN is accepted tagged too, but sent untagged). */
  readonly tagged: readonly number[];
  /** Whether a NIC is plugged in (a QEMU netdev is connected). */
  readonly up: boolean;
}

export interface Ingress {
  readonly portId: string;
  /** The frame's 802.1Q VLAN id; undefined for an untagged (or priority-tagged) frame. */
  readonly vid: number | undefined;
}

export interface Egress {
  readonly portId: string;
  /** The tag to send with; undefined = untagged. */
  readonly vid: number | undefined;
}

/** The segment a frame joins when it enters `port`; undefined = the port drops it. */
export function ingressSegment(port: SwitchPortConfig, vid: number | undefined): Segment | undefined {
  if (vid === undefined) return port.untagged;
  if (port.tagged.includes(vid) || port.untagged === vid) return vid;
  return undefined;
}

/** How a frame of `segment` leaves `port`: with its tag, untagged, or not at all (undefined). */
export function egressVid(port: SwitchPortConfig, segment: Segment): { vid: number | undefined } | undefined {
  if (port.untagged === segment) return { vid: undefined };
  if (typeof segment === 'number' && port.tagged.includes(segment)) return { vid: segment };
  return undefined;
}

/**
 * Where a frame entering `ingress` goes. Ports are taken in the given order; a LAG's frame leaves
 * through its first up member that carries the segment.
 */
export function forwardFrame(ports: readonly SwitchPortConfig[], ingress: Ingress): Egress[] {
  const from = ports.find((p) => p.id === ingress.portId);
  if (from === undefined || !from.up) return [];
  const segment = ingressSegment(from, ingress.vid);
  if (segment === undefined) return [];
  const out: Egress[] = [];
  const groupsServed = new Set<string>([from.group]);
  for (const port of ports) {
    if (!port.up || groupsServed.has(port.group)) continue;
    const how = egressVid(port, segment);
    if (how === undefined) continue;
    groupsServed.add(port.group);
    out.push({ portId: port.id, vid: how.vid });
  }
  return out;
}
