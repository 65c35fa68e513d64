// netplan: one file merged with the image's own netplan files. A bond parent is only referenced
// (`link:`), never redefined, unless a native VLAN puts addresses on it; a NIC that left the bond is
// defined under `ethernets` (the boot script removes it from the image's bond `interfaces`).
import { routeDestination } from './topology.js';
import type { PlannedInterface } from './topology.js';
import type { VlanConfig } from './types.js';
import { GENERATED_HEADER } from './ifupdown.js';
import type { RendererOutput } from './ifupdown.js';

export const NETPLAN_FILE = '/etc/netplan/60-metal-l2.yaml';

export function renderNetplan(interfaces: readonly PlannedInterface[]): RendererOutput {
  const ethernets = interfaces.filter((i) => i.role === 'parent' && i.portKind === 'nic');
  // A bond is named when a native VLAN puts addresses on it or its VLANs raise its MTU (netplan
  // merges the definition with the image's).
  const bonds = interfaces.filter((i) => i.role === 'parent' && i.portKind === 'bond' && (i.vlan !== undefined || i.mtu !== undefined));
  const vlans = interfaces.filter((i) => i.role === 'vlan');
  const lines = [`# ${GENERATED_HEADER}`, 'network:', '  version: 2'];
  if (ethernets.length > 0) {
    lines.push('  ethernets:');
    for (const e of ethernets) lines.push(`    ${q(e.name)}:`, ...settings(e, 6, { dhcp: true }));
  }
  if (bonds.length > 0) {
    lines.push('  bonds:');
    for (const b of bonds) lines.push(`    ${q(b.name)}:`, ...settings(b, 6, { dhcp: false }));
  }
  if (vlans.length > 0) {
    lines.push('  vlans:');
    for (const v of vlans) {
      lines.push(`    ${q(v.name)}:`, `      id: ${v.vlanId ?? 0}`, `      link: ${q(v.parent ?? '')}`, ...settings(v, 6, { dhcp: true }));
    }
  }
  // netplan warns about (and newer versions refuse) world-readable files.
  return {
    files: [{ path: NETPLAN_FILE, content: lines.join('\n') + '\n', mode: '0600' }],
    interfaces: [...ethernets, ...bonds, ...vlans].map((i) => i.name),
  };
}

function settings(iface: PlannedInterface, depth: number, opts: { dhcp: boolean }): string[] {
  const pad = ' '.repeat(depth);
  const lines: string[] = [];
  const vlan: VlanConfig | undefined = iface.vlan;
  if (opts.dhcp) lines.push(`${pad}dhcp4: false`, `${pad}dhcp6: false`, `${pad}accept-ra: false`);
  if (vlan === undefined) return [...lines, ...(iface.mtu === undefined ? [] : [`${pad}mtu: ${iface.mtu}`])];
  if (vlan.addresses.length > 0) {
    lines.push(`${pad}addresses:`, ...vlan.addresses.map((a) => `${pad}  - ${q(`${a.address}/${a.prefix}`)}`));
  }
  if (vlan.routes.length > 0) {
    lines.push(`${pad}routes:`);
    for (const r of vlan.routes) {
      lines.push(`${pad}  - to: ${q(routeDestination(r))}`, `${pad}    via: ${q(r.via)}`);
      if (r.metric !== undefined) lines.push(`${pad}    metric: ${r.metric}`);
    }
  }
  if (iface.mtu !== undefined) lines.push(`${pad}mtu: ${iface.mtu}`);
  const ns = vlan.nameservers;
  if (ns !== undefined && (ns.addresses.length > 0 || (ns.search?.length ?? 0) > 0)) {
    lines.push(`${pad}nameservers:`);
    if (ns.addresses.length > 0) lines.push(`${pad}  addresses: [${ns.addresses.map(q).join(', ')}]`);
    if (ns.search !== undefined && ns.search.length > 0) lines.push(`${pad}  search: [${ns.search.map(q).join(', ')}]`);
  }
  return lines;
}

// Placeholders start with `@`, which YAML reserves: quote every string (JSON strings are YAML).
function q(s: string): string {
  return JSON.stringify(s);
}
