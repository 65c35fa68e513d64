// systemd-networkd (Flatcar, where Afterburn writes bond0's units): a .netdev and a .network per VLAN;
// the parent gets `VLAN=` lines. A bond parent keeps the image's .network file and gets a drop-in
// beside it (its name is only known at boot: `@netfile:bond0@`); a NIC that left the bond gets its
// own .network that sorts before the image's files, so networkd picks ours (first match wins).
import { interfaceFileStem, networkFilePlaceholder, routeDestination } from './topology.js';
import type { PlannedInterface } from './topology.js';
import type { RenderedFile, VlanConfig } from './types.js';
import { GENERATED_HEADER } from './ifupdown.js';
import type { RendererOutput } from './ifupdown.js';

export const NETWORKD_DIR = '/etc/systemd/network';

export function renderNetworkd(interfaces: readonly PlannedInterface[]): RendererOutput {
  const files: RenderedFile[] = [];
  for (const iface of interfaces) {
    const stem = interfaceFileStem(iface);
    if (iface.role === 'vlan') {
      files.push(
        file(`${NETWORKD_DIR}/60-metal-l2-${stem}.netdev`, [
          ['NetDev', [`Name=${iface.name}`, 'Kind=vlan', ...(iface.mtu === undefined ? [] : [`MTUBytes=${iface.mtu}`])]],
          ['VLAN', [`Id=${iface.vlanId ?? 0}`]],
        ]),
      );
      files.push(
        file(`${NETWORKD_DIR}/60-metal-l2-${stem}.network`, [
          ['Match', [`Name=${iface.name}`]],
          ...networkSections(iface, { ownsLink: true }),
        ]),
      );
    } else if (iface.portKind === 'bond') {
      files.push(
        file(`${NETWORKD_DIR}/${networkFilePlaceholder(iface.port)}.d/60-metal-l2.conf`, networkSections(iface, { ownsLink: false })),
      );
    } else {
      files.push(
        file(`${NETWORKD_DIR}/05-metal-l2-${stem}.network`, [
          ['Match', [`Name=${iface.name}`]],
          ...networkSections(iface, { ownsLink: true }),
        ]),
      );
    }
  }
  return { files, interfaces: interfaces.map((i) => i.name) };
}

type Section = [string, string[]];

function networkSections(iface: PlannedInterface, opts: { ownsLink: boolean }): Section[] {
  const vlan: VlanConfig | undefined = iface.vlan;
  const sections: Section[] = [];
  // A bond's drop-in sets the MTU too when its VLANs need it raised (the bonding driver sets the
  // slaves to the bond's MTU); otherwise the image's settings of the link stay.
  if (iface.mtu !== undefined && (opts.ownsLink || iface.role === 'parent')) sections.push(['Link', [`MTUBytes=${iface.mtu}`]]);
  const network: string[] = [];
  if (opts.ownsLink) network.push('DHCP=no', 'IPv6AcceptRA=no');
  network.push(...iface.taggedVlanIds.map((id) => `VLAN=${iface.name}.${id}`));
  network.push(...(vlan?.addresses ?? []).map((a) => `Address=${a.address}/${a.prefix}`));
  network.push(...(vlan?.nameservers?.addresses ?? []).map((ns) => `DNS=${ns}`));
  if (vlan?.nameservers?.search !== undefined && vlan.nameservers.search.length > 0) {
    network.push(`Domains=${vlan.nameservers.search.join(' ')}`);
  }
  sections.push(['Network', network]);
  for (const r of vlan?.routes ?? []) {
    sections.push([
      'Route',
      [`Destination=${routeDestination(r)}`, `Gateway=${r.via}`, ...(r.metric === undefined ? [] : [`Metric=${r.metric}`])],
    ]);
  }
  return sections;
}

function file(path: string, sections: Section[]): RenderedFile {
  const body = sections.map(([name, lines]) => [`[${name}]`, ...lines].join('\n')).join('\n\n');
  return { path, content: `# ${GENERATED_HEADER}\n${body}\n`, mode: '0644' };
}
