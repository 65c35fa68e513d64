import { describe, expect, test } from '@jest/globals';
import { renderMachineNetwork } from './render.js';
import type { PortConfig, RenderedNetwork, RendererName } from './types.js';
import { config, vlan } from '../test/fixtures/networks.js';

// A VLAN's MTU cannot exceed its parent's: `mtu: 9000` on a VLAN raises its parent (the bond, whose
// slaves the kernel's bonding driver sets to the bond's MTU, or the NIC that left the bond) to the
// largest MTU of its VLANs. A smaller MTU never lowers the parent (Metal's ports come up at 1500).

function render(ports: PortConfig[], renderer: RendererName): RenderedNetwork {
  const out = renderMachineNetwork(config(ports, renderer));
  if (out.kind !== 'rendered') throw new Error(`expected rendered, got ${JSON.stringify(out.issues)}`);
  return out.network;
}

function fileText(network: RenderedNetwork, pathPart: string): string {
  const found = network.files.filter((f) => f.path.includes(pathPart));
  if (found.length === 0) throw new Error(`no file ${pathPart} in ${network.files.map((f) => f.path).join(', ')}`);
  return found.map((f) => f.content).join('\n');
}

const jumboOnBond: PortConfig[] = [
  {
    name: 'bond0',
    bonded: true,
    layer2: false,
    vlans: [vlan(1000, '192.168.10.5/24', { mtu: 9000 }), vlan(1001, '192.168.11.5/24', { mtu: 1500 })],
  },
];
const jumboOnDetachedNic: PortConfig[] = [
  { name: 'bond0', bonded: true, layer2: false, vlans: [] },
  {
    name: 'eth1',
    bonded: false,
    layer2: false,
    vlans: [vlan(1000, '192.168.10.5/24', { native: true }), vlan(1001, '192.168.11.5/24', { mtu: 9000 })],
  },
];
const jumboBesideDefault: PortConfig[] = [
  { name: 'bond0', bonded: true, layer2: false, vlans: [vlan(1000, '192.168.10.5/24'), vlan(1001, '192.168.11.5/24', { mtu: 9000 })] },
];
const smallOnBond: PortConfig[] = [{ name: 'bond0', bonded: true, layer2: false, vlans: [vlan(1000, '192.168.10.5/24', { mtu: 1400 })] }];

describe('a VLAN MTU above its parent raises the parent', () => {
  test('ifupdown: the bond is raised before its VLAN is created; a detached NIC carries the MTU itself', () => {
    const bond = fileText(render(jumboOnBond, 'ifupdown'), 'interfaces.d');
    expect(bond).toContain(
      '    pre-up ip link set dev @port:bond0@ mtu 9000\n    pre-up ip link add link @port:bond0@ name @port:bond0@.1000 type vlan id 1000 || true\n',
    );
    expect(bond).toContain('pre-up ip link set dev @port:bond0@ mtu 9000\n    pre-up ip link add link @port:bond0@ name @port:bond0@.1001');
    const nic = fileText(render(jumboOnDetachedNic, 'ifupdown'), 'interfaces.d');
    expect(nic).toMatch(/iface @port:eth1@ inet static\n(?: {4}.*\n)* {4}mtu 9000\n/);
    expect(nic).toContain('    mtu 9000\n');
  });

  test('netplan: the bond is named with the MTU (merged with the image definition); so is the detached NIC', () => {
    const bond = fileText(render(jumboOnBond, 'netplan'), 'netplan');
    expect(bond).toContain('  bonds:\n    "@port:bond0@":\n      mtu: 9000\n');
    const nic = fileText(render(jumboOnDetachedNic, 'netplan'), 'netplan');
    expect(nic).toMatch(/ {4}"@port:eth1@":\n(?: {6}.*\n)* {6}mtu: 9000\n/);
  });

  test("networkd: the bond's drop-in and the detached NIC's .network set MTUBytes", () => {
    const bond = fileText(render(jumboOnBond, 'networkd'), '@netfile:bond0@.d');
    expect(bond).toContain('[Link]\nMTUBytes=9000\n');
    const nic = fileText(render(jumboOnDetachedNic, 'networkd'), '05-metal-l2-eth1.network');
    expect(nic).toContain('[Link]\nMTUBytes=9000\n');
  });

  // The kernel gives a VLAN created without an MTU its parent's: raised first, VLAN 1000 would be
  // 9000 while its peers on VLAN 1000 are at 1500.
  test('a VLAN without an mtu beside a raised one is set to 1500, not left to inherit the raised parent', () => {
    const ifupdown = fileText(render(jumboBesideDefault, 'ifupdown'), 'interfaces.d');
    expect(ifupdown).toMatch(/iface @port:bond0@\.1000 inet static\n(?: {4}.*\n)* {4}mtu 1500\n/);
    expect(ifupdown).toMatch(/iface @port:bond0@\.1001 inet static\n(?: {4}.*\n)* {4}mtu 9000\n/);
    const netplan = fileText(render(jumboBesideDefault, 'netplan'), 'netplan');
    expect(netplan).toMatch(/ {4}"@port:bond0@\.1000":\n(?: {6}.*\n)* {6}mtu: 1500\n/);
    const networkd = render(jumboBesideDefault, 'networkd');
    expect(fileText(networkd, 'bond0.1000.netdev')).toContain('MTUBytes=1500\n');
    expect(fileText(networkd, 'bond0.1001.netdev')).toContain('MTUBytes=9000\n');
  });

  test.each<RendererName>(['ifupdown', 'netplan', 'networkd'])('%s: a smaller VLAN MTU leaves the parent alone', (renderer) => {
    const network = render(smallOnBond, renderer);
    const all = network.files.map((f) => f.content).join('\n');
    expect(all).not.toContain('@port:bond0@ mtu');
    expect(all).not.toContain('MTUBytes=1400\n\n[Network]\nDHCP=no\nIPv6AcceptRA=no\nVLAN=');
    expect(all).toMatch(/1400/);
    if (renderer === 'networkd') expect(fileText(network, '@netfile:bond0@.d')).not.toContain('[Link]');
    if (renderer === 'netplan') expect(all).not.toContain('  bonds:');
  });
});
