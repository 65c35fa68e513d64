import { describe, expect, test } from '@jest/globals';
import type { Device, Port, VirtualNetwork } from '@metal-l2/metal-api';
import { findDrift } from './configure-ports.js';

const vlan = (vxlan: number): VirtualNetwork => ({
  id: `vlan-${vxlan}`,
  vxlan,
  metro_code: 'da',
  href: `/metal/v1/virtual-networks/vlan-${vxlan}`,
});
const VLANS = [vlan(1000), vlan(1001)];

/** A two-port device: bond0 (eth0+eth1) in layer 3 or 2 with the given VLANs, eth1 bonded or not. */
function device(bond0: { layer2?: boolean; vlans?: number[]; native?: number }, eth1Bonded = true): Device {
  const physical = (name: string, bonded: boolean): Port => ({
    id: `port-${name}`,
    name,
    type: 'NetworkPort',
    data: { bonded },
    bond: { id: 'port-bond0', name: 'bond0' },
    virtual_networks: [],
  });
  const bond: Port = {
    id: 'port-bond0',
    name: 'bond0',
    type: 'NetworkBondPort',
    data: { bonded: true },
    network_type: bond0.layer2 === true ? 'layer2-bonded' : 'hybrid-bonded',
    virtual_networks: (bond0.vlans ?? []).map(vlan),
    ...(bond0.native === undefined ? {} : { native_virtual_network: vlan(bond0.native) }),
  };
  return { id: 'd', state: 'active', metro: { code: 'da' }, network_ports: [physical('eth0', true), physical('eth1', eth1Bonded), bond] };
}

const desired = [{ name: 'bond0', vlans: [1000] }];

describe('findDrift', () => {
  test('a device as the template wants it has none', () => {
    expect(findDrift({ device: device({ vlans: [1000] }), desired, vlans: VLANS })).toEqual({ kind: 'none' });
  });

  test('only a VLAN of the template missing is repaired', () => {
    expect(findDrift({ device: device({ vlans: [] }), desired, vlans: VLANS })).toEqual({ kind: 'repair', missing: ['1000 on bond0'] });
  });

  test('a foreign VLAN, a mode change, a bond change and a native VLAN are reported, with a missing VLAN among them', () => {
    const drift = findDrift({ device: device({ layer2: true, vlans: [1001], native: 1001 }, false), desired, vlans: VLANS });
    expect(drift.kind).toBe('report');
    const text = drift.kind === 'report' ? drift.differences.join('\n') : '';
    expect(text).toContain('bond0 is in layer 2');
    expect(text).toContain('bond0 has VLAN 1001, which the template does not have');
    expect(text).toContain('bond0 has native VLAN 1001; the template wants none');
    expect(text).toContain('eth1 is out of its bond');
    expect(text).toContain('VLAN 1000 on bond0 is missing');
  });
});
