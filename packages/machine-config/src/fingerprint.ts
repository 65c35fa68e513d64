// What a machine's OS was given that matters, as one hash: its ports' modes, VLANs, addresses,
// routes, MTUs and nameservers, and the Cluster endpoint (VIP) it announces. Our own bytes (the boot
// script, the renderer's file layout, keepalived's settings, the metadata URL) are left out, so a
// release that only renders differently keeps every provisioned machine's fingerprint, and a claim
// re-made with another address changes it. The injection hash (injectionHash) is the other record:
// the bytes themselves.
import { createHash } from 'node:crypto';
import type { EndpointAnnouncerInput } from './endpoint-announcer.js';
import type { PortConfig } from './types.js';

/**
 * The version of what this package renders into user data (network files, boot script, announcer,
 * cloud-config part). A release bumps it whenever the injected bytes for the same input change, so
 * a machine's record says which rendering it booted with. Records made before there was a version
 * have none.
 *
 * 1: the first recorded (its boot script ran a python3 helper). 2: the boot script needs no python3
 * (sh and awk), so stock Flatcar runs it; the network files it writes are the same.
 */
export const RENDERER_VERSION = 2;

/** The Cluster endpoint (VIP) a control plane announces: what its keepalived is given. */
export type AnnouncedEndpoint = Pick<EndpointAnnouncerInput, 'address' | 'prefix' | 'port' | 'vxlan' | 'virtualRouterID'>;

/** What a machine's OS is given that matters; the input of networkFingerprint. */
export interface InjectedContent {
  readonly ports: readonly PortConfig[];
  /** A control plane's announced endpoint; none for machines without the announcer. */
  readonly endpoint?: AnnouncedEndpoint | undefined;
}

/** The scheme of the hashed text: a change to what is hashed is a new scheme, never a silent one. */
const SCHEME = 'metal-l2 fingerprint v1';

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * One canonical form per meaning: ports by name, VLANs by vxlan, addresses sorted, fields in a fixed
 * order and absent ones omitted. Gateways are left out (no renderer gives them to the OS); routes
 * and nameservers keep their order (a resolver's order is meaning).
 */
function canonical(content: InjectedContent): unknown {
  const ports = [...content.ports]
    .sort((a, b) => byText(a.name, b.name))
    .map((p) => ({
      name: p.name,
      bonded: p.bonded,
      layer2: p.layer2,
      vlans: [...p.vlans]
        .sort((a, b) => a.vxlan - b.vxlan)
        .map((v) => ({
          vxlan: v.vxlan,
          native: v.native,
          addresses: v.addresses.map((a) => `${a.address}/${a.prefix}`).sort(byText),
          routes: v.routes.map((r) => [r.to, r.via, r.metric ?? null]),
          mtu: v.mtu ?? null,
          nameservers: v.nameservers === undefined ? null : [v.nameservers.addresses, v.nameservers.search ?? []],
        })),
    }));
  const e = content.endpoint;
  const endpoint = e === undefined ? null : [e.address, e.prefix, e.port, e.vxlan, e.virtualRouterID];
  return { ports, endpoint };
}

/**
 * The sha256 (hex) of what the OS is given that matters. Recorded at injection beside the bytes'
 * hash; a provisioned machine whose bytes differ from what this release renders but whose
 * fingerprint is the same was injected by another rendering, and nothing about it needs doing.
 */
export function networkFingerprint(content: InjectedContent): string {
  return createHash('sha256')
    .update(`${SCHEME}\n${JSON.stringify(canonical(content))}`, 'utf8')
    .digest('hex');
}
