import { describe, expect, test } from '@jest/globals';
import { renderMachineNetwork } from './render.js';
import type { RenderedNetwork, RendererName } from './types.js';
import {
  config,
  fullFeatured,
  hybridBonded,
  hybridNative,
  hybridTagged,
  layer2Bonded,
  layer2Individual,
} from '../test/fixtures/networks.js';
import type { PortConfig } from './types.js';

function render(ports: PortConfig[], renderer: RendererName): RenderedNetwork {
  const out = renderMachineNetwork(config(ports, renderer));
  if (out.kind !== 'rendered') throw new Error(`expected rendered, got ${JSON.stringify(out.issues)}`);
  return out.network;
}

function text(network: RenderedNetwork): string {
  return network.files.map((f) => `>>> ${f.path} ${f.mode}\n${f.content}`).join('\n');
}

describe('ifupdown', () => {
  test('hybrid-bonded: tagged sub-interfaces on the OS bond, created with iproute2, bond0 itself untouched', () => {
    const network = render(hybridBonded, 'ifupdown');
    expect(network.files).toEqual([
      {
        path: '/etc/network/interfaces.d/60-metal-l2.cfg',
        mode: '0644',
        content: [
          '# metal-l2: generated at first boot from the machine network; rewritten whole on every apply',
          '',
          'auto @port:bond0@.1000',
          'iface @port:bond0@.1000 inet static',
          '    pre-up ip link add link @port:bond0@ name @port:bond0@.1000 type vlan id 1000 || true',
          '    address 192.168.10.5/24',
          '    post-down ip link del @port:bond0@.1000 || true',
          '',
          'auto @port:bond0@.1001',
          'iface @port:bond0@.1001 inet static',
          '    pre-up ip link add link @port:bond0@ name @port:bond0@.1001 type vlan id 1001 || true',
          '    address 192.168.11.5/24',
          '    post-down ip link del @port:bond0@.1001 || true',
          '',
        ].join('\n'),
      },
    ]);
    expect(network.interfaces).toEqual(['@port:bond0@.1000', '@port:bond0@.1001']);
    expect(network.ports).toEqual([{ name: 'bond0', kind: 'bond', detach: false }]);
  });

  test.each([
    {
      name: 'hybrid with one native VLAN: address untagged on eth1 itself, eth1 leaves the bond',
      ports: hybridNative,
      want: [
        'auto @port:eth1@\niface @port:eth1@ inet static\n    pre-up ip link set dev @port:eth1@ nomaster || true\n    address 192.168.10.5/24\n',
      ],
      not: ['@port:eth1@.1000', 'iface @port:bond0@'],
      interfaces: ['@port:eth1@'],
    },
    {
      name: 'hybrid with several tagged VLANs: eth1 up without addresses, VLANs tagged on it',
      ports: hybridTagged,
      want: [
        'iface @port:eth1@ inet manual\n    pre-up ip link set dev @port:eth1@ nomaster || true\n    up ip link set dev @port:eth1@ up\n',
        'pre-up ip link add link @port:eth1@ name @port:eth1@.1000 type vlan id 1000 || true',
        'pre-up ip link add link @port:eth1@ name @port:eth1@.1001 type vlan id 1001 || true',
      ],
      not: ['@port:bond0@'],
      interfaces: ['@port:eth1@', '@port:eth1@.1000', '@port:eth1@.1001'],
    },
    {
      name: 'layer2-bonded: native VLAN untagged on the bond, the other tagged on it',
      ports: layer2Bonded,
      want: [
        'auto @port:bond0@\niface @port:bond0@ inet static\n    address 192.168.10.5/24\n',
        'name @port:bond0@.1001 type vlan id 1001',
      ],
      not: ['@port:bond0@.1000', 'nomaster'],
      interfaces: ['@port:bond0@', '@port:bond0@.1001'],
    },
    {
      name: 'layer2-individual: VLANs on each physical port as listed on them',
      ports: layer2Individual,
      want: [
        'iface @port:eth0@ inet manual',
        'name @port:eth0@.1000 type vlan id 1000',
        'iface @port:eth1@ inet static\n    pre-up ip link set dev @port:eth1@ nomaster || true\n    address 192.168.11.5/24',
      ],
      not: ['@port:eth1@.1001', '@port:bond0@'],
      interfaces: ['@port:eth0@', '@port:eth1@', '@port:eth0@.1000'],
    },
    {
      name: 'IPv6, extra address, routes with metric and default, mtu, nameservers',
      ports: fullFeatured,
      want: [
        'iface @port:bond0@.1000 inet static\n    pre-up ip link set dev @port:bond0@ mtu 9000\n    pre-up ip link add link @port:bond0@ name @port:bond0@.1000 type vlan id 1000 || true\n    address 192.168.10.5/24\n    mtu 9000\n    dns-nameservers 10.60.0.2 2001:db8:10::53\n    dns-search example.internal\n    up ip addr replace 192.168.20.5/24 dev @port:bond0@.1000\n    up ip route replace 10.60.0.0/16 via 192.168.10.1 dev @port:bond0@.1000 metric 100\n',
        'iface @port:bond0@.1000 inet6 static\n    address 2001:db8:10::5/64\n    up ip -6 route replace ::/0 via 2001:db8:10::1 dev @port:bond0@.1000\n',
      ],
      // The address's gateway never becomes a default route: hybrid modes keep theirs on bond0.
      not: ['gateway', 'default via 192.168.10.1'],
      interfaces: ['@port:bond0@.1000'],
    },
  ])('$name', ({ ports, want, not, interfaces }) => {
    const network = render(ports, 'ifupdown');
    const all = text(network);
    for (const w of want) expect(all).toContain(w);
    for (const n of not) expect(all).not.toContain(n);
    expect(network.interfaces).toEqual(interfaces);
  });
});

describe('netplan', () => {
  test.each([
    {
      name: 'hybrid-bonded: vlans linked to the image bond, which is not redefined',
      ports: hybridBonded,
      want: ['  vlans:\n    "@port:bond0@.1000":\n      id: 1000\n      link: "@port:bond0@"\n', '        - "192.168.11.5/24"'],
      not: ['bonds:', 'ethernets:'],
    },
    {
      name: 'hybrid with one native VLAN: eth1 under ethernets with the address',
      ports: hybridNative,
      want: [
        '  ethernets:\n    "@port:eth1@":\n      dhcp4: false\n      dhcp6: false\n      accept-ra: false\n      addresses:\n        - "192.168.10.5/24"\n',
      ],
      not: ['vlans:'],
    },
    {
      name: 'hybrid with several tagged VLANs: eth1 without addresses, two vlans on it',
      ports: hybridTagged,
      want: [
        '    "@port:eth1@":\n      dhcp4: false\n      dhcp6: false\n      accept-ra: false\n  vlans:',
        'link: "@port:eth1@"',
        '"@port:eth1@.1001":\n      id: 1001',
      ],
      not: ['bonds:'],
    },
    {
      name: 'layer2-bonded: native addresses on the bond, merged with the image definition',
      ports: layer2Bonded,
      want: [
        '  bonds:\n    "@port:bond0@":\n      addresses:\n        - "192.168.10.5/24"\n',
        '"@port:bond0@.1001":\n      id: 1001\n      link: "@port:bond0@"',
      ],
      not: ['dhcp4: false\n      addresses:\n        - "192.168.10.5/24"\n  vlans'],
    },
    {
      name: 'layer2-individual: both NICs under ethernets',
      ports: layer2Individual,
      want: ['    "@port:eth0@":\n', '    "@port:eth1@":\n', 'link: "@port:eth0@"'],
      not: ['@port:bond0@'],
    },
    {
      name: 'IPv6, routes with metric and default, mtu, nameservers',
      ports: fullFeatured,
      want: [
        '        - "2001:db8:10::5/64"',
        '      routes:\n        - to: "10.60.0.0/16"\n          via: "192.168.10.1"\n          metric: 100\n        - to: "::/0"\n          via: "2001:db8:10::1"\n',
        '      mtu: 9000\n',
        '      nameservers:\n        addresses: ["10.60.0.2", "2001:db8:10::53"]\n        search: ["example.internal"]\n',
      ],
      not: ['gateway'],
    },
  ])('$name', ({ ports, want, not }) => {
    const network = render(ports, 'netplan');
    expect(network.files.map((f) => [f.path, f.mode])).toEqual([['/etc/netplan/60-metal-l2.yaml', '0600']]);
    const all = text(network);
    for (const w of want) expect(all).toContain(w);
    for (const n of not) expect(all).not.toContain(n);
  });
});

describe('networkd', () => {
  test.each([
    {
      name: 'hybrid-bonded: a drop-in beside the image bond .network adds the VLANs; a netdev and network per VLAN',
      ports: hybridBonded,
      files: [
        '/etc/systemd/network/@netfile:bond0@.d/60-metal-l2.conf',
        '/etc/systemd/network/60-metal-l2-bond0.1000.netdev',
        '/etc/systemd/network/60-metal-l2-bond0.1000.network',
        '/etc/systemd/network/60-metal-l2-bond0.1001.netdev',
        '/etc/systemd/network/60-metal-l2-bond0.1001.network',
      ],
      want: [
        '[Network]\nVLAN=@port:bond0@.1000\nVLAN=@port:bond0@.1001\n',
        '[NetDev]\nName=@port:bond0@.1000\nKind=vlan\n\n[VLAN]\nId=1000\n',
        '[Match]\nName=@port:bond0@.1001\n\n[Network]\nDHCP=no\nIPv6AcceptRA=no\nAddress=192.168.11.5/24\n',
      ],
    },
    {
      name: 'hybrid with one native VLAN: eth1 gets its own .network that sorts before the image files',
      ports: hybridNative,
      files: ['/etc/systemd/network/05-metal-l2-eth1.network'],
      want: ['[Match]\nName=@port:eth1@\n\n[Network]\nDHCP=no\nIPv6AcceptRA=no\nAddress=192.168.10.5/24\n'],
    },
    {
      name: 'hybrid with several tagged VLANs on eth1',
      ports: hybridTagged,
      files: [
        '/etc/systemd/network/05-metal-l2-eth1.network',
        '/etc/systemd/network/60-metal-l2-eth1.1000.netdev',
        '/etc/systemd/network/60-metal-l2-eth1.1000.network',
        '/etc/systemd/network/60-metal-l2-eth1.1001.netdev',
        '/etc/systemd/network/60-metal-l2-eth1.1001.network',
      ],
      want: ['VLAN=@port:eth1@.1000\nVLAN=@port:eth1@.1001\n'],
    },
    {
      name: 'layer2-bonded: native address and the tagged VLAN in the bond drop-in',
      ports: layer2Bonded,
      files: [
        '/etc/systemd/network/@netfile:bond0@.d/60-metal-l2.conf',
        '/etc/systemd/network/60-metal-l2-bond0.1001.netdev',
        '/etc/systemd/network/60-metal-l2-bond0.1001.network',
      ],
      want: ['[Network]\nVLAN=@port:bond0@.1001\nAddress=192.168.10.5/24\n'],
    },
    {
      name: 'layer2-individual: each NIC its own .network',
      ports: layer2Individual,
      files: [
        '/etc/systemd/network/05-metal-l2-eth0.network',
        '/etc/systemd/network/05-metal-l2-eth1.network',
        '/etc/systemd/network/60-metal-l2-eth0.1000.netdev',
        '/etc/systemd/network/60-metal-l2-eth0.1000.network',
      ],
      want: [
        'Name=@port:eth0@\n\n[Network]\nDHCP=no\nIPv6AcceptRA=no\nVLAN=@port:eth0@.1000\n',
        'Name=@port:eth1@\n\n[Network]\nDHCP=no\nIPv6AcceptRA=no\nAddress=192.168.11.5/24\n',
      ],
    },
    {
      name: 'IPv6, routes with metric and default, mtu, nameservers',
      ports: fullFeatured,
      files: [
        '/etc/systemd/network/@netfile:bond0@.d/60-metal-l2.conf',
        '/etc/systemd/network/60-metal-l2-bond0.1000.netdev',
        '/etc/systemd/network/60-metal-l2-bond0.1000.network',
      ],
      want: [
        'Kind=vlan\nMTUBytes=9000\n',
        '[Link]\nMTUBytes=9000\n',
        'Address=2001:db8:10::5/64\nDNS=10.60.0.2\nDNS=2001:db8:10::53\nDomains=example.internal\n',
        '[Route]\nDestination=10.60.0.0/16\nGateway=192.168.10.1\nMetric=100\n',
        '[Route]\nDestination=::/0\nGateway=2001:db8:10::1\n',
      ],
    },
  ])('$name', ({ ports, files, want }) => {
    const network = render(ports, 'networkd');
    expect(network.files.map((f) => f.path)).toEqual(files);
    const all = text(network);
    for (const w of want) expect(all).toContain(w);
  });
});

describe('every renderer', () => {
  const renderers: RendererName[] = ['ifupdown', 'netplan', 'networkd'];
  const situations = { hybridBonded, hybridNative, hybridTagged, layer2Bonded, layer2Individual, fullFeatured };
  test.each(renderers.flatMap((renderer) => Object.entries(situations).map(([situation, ports]) => ({ renderer, situation, ports }))))(
    '$renderer, $situation: deterministic, template-safe, keyed by port placeholders only',
    ({ renderer, situation: _situation, ports }) => {
      const a = text(render(ports, renderer));
      expect(text(render(ports, renderer))).toBe(a);
      for (const bad of ['{{', '{%', '{#']) expect(a).not.toContain(bad);
      // Interface names appear only as placeholders inside the files (paths may name the Metal port).
      for (const f of render(ports, renderer).files)
        expect(f.content.replace(/@(port|netfile):[a-z0-9]+@/g, 'IF')).not.toMatch(/\b(bond|eth)[0-9]\b/);
    },
  );

  test('metadata URL and renderer travel to the boot script', () => {
    const network = render(hybridNative, 'netplan');
    expect(network).toMatchObject({
      version: 1,
      renderer: 'netplan',
      metadataUrl: 'https://metadata.platformequinix.com/metadata',
      ports: [
        { name: 'bond0', kind: 'bond', detach: false },
        { name: 'eth1', kind: 'nic', detach: true },
      ],
    });
  });
});
