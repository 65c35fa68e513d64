import { describe, expect, test } from '@jest/globals';
import { renderMachineNetwork } from './render.js';
import type { MachineNetworkConfig, PortConfig } from './types.js';
import { config, hybridBonded, vlan } from '../test/fixtures/networks.js';

function withVlan(extra: Parameters<typeof vlan>[2], address = '192.168.10.5/24'): PortConfig[] {
  return [{ name: 'bond0', bonded: true, layer2: false, vlans: [vlan(1000, address, extra)] }];
}

describe('renderMachineNetwork refuses what cannot be rendered safely', () => {
  test.each([
    {
      name: 'port name that is not a Metal port name',
      cfg: config([{ name: 'eth1; reboot', bonded: false, layer2: true, vlans: [] }]),
      code: 'InvalidPortName',
      path: ['ports', 0, 'name'],
    },
    { name: 'port listed twice', cfg: config([...hybridBonded, ...hybridBonded]), code: 'DuplicatePort', path: ['ports', 1, 'name'] },
    {
      name: 'vxlan twice on one port',
      cfg: config([{ name: 'bond0', bonded: true, layer2: false, vlans: [vlan(1000, '10.0.0.1/24'), vlan(1000, '10.0.1.1/24')] }]),
      code: 'DuplicateVlan',
      path: ['ports', 0, 'vlans', 1, 'vxlan'],
    },
    {
      name: 'two native VLANs on one port',
      cfg: config([
        {
          name: 'eth1',
          bonded: false,
          layer2: true,
          vlans: [vlan(1000, '10.0.0.1/24', { native: true }), vlan(1001, '10.0.1.1/24', { native: true })],
        },
      ]),
      code: 'MultipleNativeVlans',
      path: ['ports', 0, 'vlans'],
    },
    {
      name: 'VLAN id out of range',
      cfg: config([{ name: 'bond0', bonded: true, layer2: false, vlans: [vlan(5000, '10.0.0.1/24')] }]),
      code: 'InvalidVlanId',
      path: ['ports', 0, 'vlans', 0, 'vxlan'],
    },
    {
      name: 'address that is not an IP',
      cfg: config(withVlan({}, '10.0.0.300/24')),
      code: 'InvalidAddress',
      path: ['ports', 0, 'vlans', 0, 'addresses', 0, 'address'],
    },
    {
      name: 'IPv4 prefix over 32',
      cfg: config(withVlan({}, '10.0.0.1/33')),
      code: 'InvalidPrefix',
      path: ['ports', 0, 'vlans', 0, 'addresses', 0, 'prefix'],
    },
    {
      name: 'route to something that is not a CIDR',
      cfg: config(withVlan({ routes: [{ to: '10.0.0.0/16 dev lo', via: '192.168.10.1' }] })),
      code: 'InvalidRoute',
      path: ['ports', 0, 'vlans', 0, 'routes', 0, 'to'],
    },
    {
      name: 'route mixing families',
      cfg: config(withVlan({ routes: [{ to: '2001:db8::/32', via: '192.168.10.1' }] })),
      code: 'InvalidRoute',
      path: ['ports', 0, 'vlans', 0, 'routes', 0, 'to'],
    },
    {
      name: 'negative metric',
      cfg: config(withVlan({ routes: [{ to: 'default', via: '192.168.10.1', metric: -1 }] })),
      code: 'InvalidRoute',
      path: ['ports', 0, 'vlans', 0, 'routes', 0, 'metric'],
    },
    { name: 'MTU over 9000', cfg: config(withVlan({ mtu: 9216 })), code: 'InvalidMtu', path: ['ports', 0, 'vlans', 0, 'mtu'] },
    {
      name: 'nameserver that is a name',
      cfg: config(withVlan({ nameservers: { addresses: ['dns.example'] } })),
      code: 'InvalidNameserver',
      path: ['ports', 0, 'vlans', 0, 'nameservers', 'addresses', 0],
    },
    {
      name: 'search domain with a space',
      cfg: config(withVlan({ nameservers: { addresses: [], search: ['a b'] } })),
      code: 'InvalidSearchDomain',
      path: ['ports', 0, 'vlans', 0, 'nameservers', 'search', 0],
    },
    {
      name: 'metadata URL with a quote',
      cfg: { ...config(hybridBonded), metadataUrl: "https://metadata'x" },
      code: 'InvalidMetadataUrl',
      path: ['metadataUrl'],
    },
    {
      name: 'unknown renderer',
      cfg: { ...config(hybridBonded), renderer: 'wicked' } as unknown as MachineNetworkConfig,
      code: 'InvalidRenderer',
      path: ['renderer'],
    },
    {
      name: 'VLAN interface name over 15 characters',
      cfg: config([{ name: 'enp1s0f1np1', bonded: false, layer2: true, vlans: [vlan(1000, '10.0.0.1/24')] }]),
      code: 'InterfaceNameTooLong',
      path: ['ports', 0, 'vlans', 0, 'vxlan'],
    },
  ])('$name', ({ cfg, code, path }) => {
    const out = renderMachineNetwork(cfg);
    expect(out.kind).toBe('invalid');
    if (out.kind !== 'invalid') return;
    expect(out.issues).toContainEqual(expect.objectContaining({ code, path }));
  });

  test('a valid configuration has no issues', () => {
    expect(
      renderMachineNetwork(
        config(
          withVlan({
            mtu: 9000,
            routes: [{ to: 'default', via: '192.168.10.1', metric: 0 }],
            nameservers: { addresses: ['10.0.0.2'], search: ['example.internal.'] },
          }),
        ),
      ).kind,
    ).toBe('rendered');
  });
});
