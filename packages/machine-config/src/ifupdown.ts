// ifupdown (Equinix's Debian and Ubuntu images): one file in /etc/network/interfaces.d, which the boot
// script makes /etc/network/interfaces source (Equinix's file has no `source` line). VLAN links are
// created with iproute2 in pre-up, so neither the `vlan` package nor a loaded 8021q is needed (the
// kernel loads 8021q on `ip link add ... type vlan`).
import { isIPv6, routeDestination } from './topology.js';
import type { PlannedInterface } from './topology.js';
import type { NetworkAddress, NetworkRoute, RenderedFile, VlanConfig } from './types.js';

export const IFUPDOWN_FILE = '/etc/network/interfaces.d/60-metal-l2.cfg';
export const IFUPDOWN_SOURCE_LINE = `source ${IFUPDOWN_FILE}`;

export const GENERATED_HEADER = 'metal-l2: generated at first boot from the machine network; rewritten whole on every apply';

/** What a renderer produces: its files, and the interfaces to bring up, parents first. */
export interface RendererOutput {
  files: RenderedFile[];
  interfaces: string[];
}

export function renderIfupdown(planned: readonly PlannedInterface[]): RendererOutput {
  // A bond without a native VLAN is the image's (Equinix's bond0 stanza): the VLAN stanzas only name it.
  const interfaces = planned.filter((i) => !(i.role === 'parent' && i.portKind === 'bond' && i.vlan === undefined));
  const content = [`# ${GENERATED_HEADER}`, '', ...interfaces.map(ifupdownStanzas)].join('\n');
  return { files: [{ path: IFUPDOWN_FILE, content, mode: '0644' }], interfaces: interfaces.map((i) => i.name) };
}

function ifupdownStanzas(iface: PlannedInterface): string {
  const name = iface.name;
  const vlan = iface.vlan;
  const v4 = vlan?.addresses.filter((a) => !isIPv6(a.address)) ?? [];
  const v6 = vlan?.addresses.filter((a) => isIPv6(a.address)) ?? [];
  const linkLines: string[] = [];
  if (iface.role === 'vlan' && iface.parent !== undefined && iface.vlanId !== undefined) {
    // The image owns a bond's stanza: its MTU is raised here, before the VLAN can be as large.
    if (iface.parentMtu !== undefined) linkLines.push(`pre-up ip link set dev ${iface.parent} mtu ${iface.parentMtu}`);
    linkLines.push(`pre-up ip link add link ${iface.parent} name ${name} type vlan id ${iface.vlanId} || true`);
  }
  if (iface.detached) {
    // Out of the bond: the NIC may still be down from being a slave.
    linkLines.push(`pre-up ip link set dev ${name} nomaster || true`);
  }
  const lines: string[] = [`auto ${name}`];
  if (v4.length === 0 && v6.length === 0) {
    lines.push(
      `iface ${name} inet manual`,
      ...indent([
        ...linkLines,
        ...mtuLines(name, iface.mtu, true),
        `up ip link set dev ${name} up`,
        ...routeLines(name, vlan),
        ...downLines(iface),
      ]),
    );
    return lines.join('\n') + '\n';
  }
  // The first family's stanza creates the link and carries MTU, DNS and routes; the second only adds addresses.
  const families: { method: 'inet' | 'inet6'; addresses: NetworkAddress[] }[] = [];
  if (v4.length > 0) families.push({ method: 'inet', addresses: v4 });
  if (v6.length > 0) families.push({ method: 'inet6', addresses: v6 });
  families.forEach((family, i) => {
    const [first, ...rest] = family.addresses;
    if (first === undefined) return;
    const opts: string[] = [];
    if (i === 0) opts.push(...linkLines);
    opts.push(`address ${first.address}/${first.prefix}`);
    if (i === 0) {
      opts.push(...mtuLines(name, iface.mtu, false));
      if (vlan?.nameservers !== undefined && vlan.nameservers.addresses.length > 0) {
        opts.push(`dns-nameservers ${vlan.nameservers.addresses.join(' ')}`);
      }
      if (vlan?.nameservers?.search !== undefined && vlan.nameservers.search.length > 0) {
        opts.push(`dns-search ${vlan.nameservers.search.join(' ')}`);
      }
    }
    for (const extra of rest) {
      opts.push(`up ip ${family.method === 'inet6' ? '-6 ' : ''}addr replace ${extra.address}/${extra.prefix} dev ${name}`);
    }
    // A route goes with the stanza of its family (once an address of that family is up), else with the first.
    opts.push(
      ...routeLines(
        name,
        vlan,
        (route) =>
          isIPv6(route.via) === (family.method === 'inet6') ||
          (i === 0 && !families.some((f) => (f.method === 'inet6') === isIPv6(route.via))),
      ),
    );
    if (i === 0) opts.push(...downLines(iface));
    lines.push(`iface ${name} ${family.method} static`, ...indent(opts));
  });
  return lines.join('\n') + '\n';
}

function mtuLines(name: string, mtu: number | undefined, manual: boolean): string[] {
  if (mtu === undefined) return [];
  return manual ? [`up ip link set dev ${name} mtu ${mtu}`] : [`mtu ${mtu}`];
}

function routeLines(name: string, vlan: VlanConfig | undefined, include: (route: NetworkRoute) => boolean = () => true): string[] {
  return (vlan?.routes ?? []).filter(include).map((r) => {
    const family = isIPv6(r.via) ? '-6 ' : '';
    const metric = r.metric === undefined ? '' : ` metric ${r.metric}`;
    return `up ip ${family}route replace ${routeDestination(r)} via ${r.via} dev ${name}${metric}`;
  });
}

function downLines(iface: PlannedInterface): string[] {
  return iface.role === 'vlan' ? [`post-down ip link del ${iface.name} || true`] : [];
}

function indent(lines: string[]): string[] {
  return lines.map((l) => `    ${l}`);
}
