import { describe, expect, test } from '@jest/globals';
import { renderEndpointAnnouncer, type RenderedAnnouncer } from './endpoint-announcer.js';
import { networkFingerprint, type AnnouncedEndpoint, type InjectedContent } from './fingerprint.js';
import { injectionHash } from './inject.js';
import { renderMachineNetwork } from './render.js';
import type { MachineNetworkConfig, PortConfig, RenderedNetwork } from './types.js';
import { config, fullFeatured, hybridBonded, layer2Individual, vlan } from '../test/fixtures/networks.js';

const ENDPOINT: AnnouncedEndpoint = { address: '192.168.10.200', prefix: 24, port: 6443, vxlan: 1000, virtualRouterID: 51 };

function rendered(c: MachineNetworkConfig): RenderedNetwork {
  const out = renderMachineNetwork(c);
  if (out.kind !== 'rendered') throw new Error(`fixture does not render: ${JSON.stringify(out.issues)}`);
  return out.network;
}

function announcer(ports: readonly PortConfig[], endpoint = ENDPOINT, advertIntervalSec?: number): RenderedAnnouncer {
  const out = renderEndpointAnnouncer({ ...endpoint, ports, ...(advertIntervalSec === undefined ? {} : { advertIntervalSec }) });
  if (out.kind !== 'rendered') throw new Error(`announcer does not render: ${JSON.stringify(out.issues)}`);
  return out.announcer;
}

/** The bytes' hash and the fingerprint of one machine, rendered the way a release would. */
function records(at: { config: MachineNetworkConfig; endpoint?: AnnouncedEndpoint; advertIntervalSec?: number }): {
  hash: string;
  fingerprint: string;
} {
  const a = at.endpoint === undefined ? undefined : announcer(at.config.ports, at.endpoint, at.advertIntervalSec);
  return {
    hash: injectionHash(rendered(at.config), a),
    fingerprint: networkFingerprint({ ports: at.config.ports, endpoint: at.endpoint }),
  };
}

const base = { config: config(hybridBonded), endpoint: ENDPOINT };

describe('networkFingerprint: only our rendering changed', () => {
  test.each([
    {
      name: 'another --metadata-url',
      other: { ...base, config: { ...config(hybridBonded), metadataUrl: 'http://169.254.169.254/metadata' } },
    },
    { name: 'another renderer writes other files for the same network', other: { ...base, config: config(hybridBonded, 'netplan') } },
    { name: 'keepalived rendered with another advertisement interval', other: { ...base, advertIntervalSec: 3 } },
  ])('$name: the bytes differ, the fingerprint is the same', ({ other }) => {
    const before = records(base);
    const after = records(other);
    expect(after.hash).not.toBe(before.hash);
    expect(after.fingerprint).toBe(before.fingerprint);
  });

  test.each([
    { name: 'ports listed in another order', ports: [...layer2Individual].reverse(), same: layer2Individual },
    {
      name: 'addresses of a VLAN in another order (status rebuilt from IPAddresses)',
      ports: [{ ...hybridBonded[0]!, vlans: [vlan(1000, '192.168.10.5/24', { addresses: [addr('192.168.20.5'), addr('192.168.10.5')] })] }],
      same: [{ ...hybridBonded[0]!, vlans: [vlan(1000, '192.168.10.5/24', { addresses: [addr('192.168.10.5'), addr('192.168.20.5')] })] }],
    },
    {
      name: 'an address’s gateway (no renderer gives it to the OS)',
      ports: [
        {
          ...hybridBonded[0]!,
          vlans: [vlan(1000, '192.168.10.5/24', { addresses: [{ ...addr('192.168.10.5'), gateway: '192.168.10.1' }] })],
        },
      ],
      same: [{ ...hybridBonded[0]!, vlans: [vlan(1000, '192.168.10.5/24')] }],
    },
  ])('$name: the same fingerprint', ({ ports, same }) => {
    expect(networkFingerprint({ ports })).toBe(networkFingerprint({ ports: same }));
  });
});

function addr(address: string, prefix = 24): { address: string; prefix: number } {
  return { address, prefix };
}

/** fullFeatured with its one VLAN changed. */
function featured(change: Partial<PortConfig['vlans'][number]>, port: Partial<PortConfig> = {}): PortConfig[] {
  const p = fullFeatured[0]!;
  return [{ ...p, ...port, vlans: [{ ...p.vlans[0]!, ...change }] }];
}

describe('networkFingerprint: what the OS is given changed', () => {
  const v = fullFeatured[0]!.vlans[0]!;
  test.each<{ name: string; content: InjectedContent }>([
    {
      name: 'an address re-made with another one',
      content: { ports: featured({ addresses: [addr('192.168.10.6'), ...v.addresses.slice(1)] }) },
    },
    { name: 'a prefix length', content: { ports: featured({ addresses: [addr('192.168.10.5', 25), ...v.addresses.slice(1)] }) } },
    { name: 'an address fewer', content: { ports: featured({ addresses: v.addresses.slice(0, 2) }) } },
    { name: 'the VLAN (vxlan)', content: { ports: featured({ vxlan: 1001 }) } },
    { name: 'the VLAN made native', content: { ports: featured({ native: true }) } },
    {
      name: 'a route’s destination',
      content: { ports: featured({ routes: [{ to: '10.61.0.0/16', via: '192.168.10.1', metric: 100 }, v.routes[1]!] }) },
    },
    {
      name: 'a route’s next hop',
      content: { ports: featured({ routes: [{ to: '10.60.0.0/16', via: '192.168.10.2', metric: 100 }, v.routes[1]!] }) },
    },
    { name: 'a route’s metric', content: { ports: featured({ routes: [{ to: '10.60.0.0/16', via: '192.168.10.1' }, v.routes[1]!] }) } },
    { name: 'the MTU', content: { ports: featured({ mtu: 1500 }) } },
    { name: 'the nameservers', content: { ports: featured({ nameservers: { addresses: ['10.60.0.3'], search: ['example.internal'] } }) } },
    { name: 'the port mode (bond to layer 2)', content: { ports: featured({}, { layer2: true }) } },
    { name: 'an announced endpoint added', content: { ports: fullFeatured, endpoint: { ...ENDPOINT, address: '192.168.10.200' } } },
  ])('$name: another fingerprint', ({ content }) => {
    expect(networkFingerprint(content)).not.toBe(networkFingerprint({ ports: fullFeatured }));
  });

  test.each<{ name: string; endpoint: AnnouncedEndpoint }>([
    { name: 'another VIP address', endpoint: { ...ENDPOINT, address: '192.168.10.201' } },
    { name: 'another VIP prefix', endpoint: { ...ENDPOINT, prefix: 25 } },
    { name: 'another API server port', endpoint: { ...ENDPOINT, port: 7443 } },
    { name: 'another VLAN', endpoint: { ...ENDPOINT, vxlan: 1001 } },
    { name: 'another virtual router id', endpoint: { ...ENDPOINT, virtualRouterID: 52 } },
  ])('the announced endpoint: $name gives another fingerprint', ({ endpoint }) => {
    expect(networkFingerprint({ ports: hybridBonded, endpoint })).not.toBe(networkFingerprint({ ports: hybridBonded, endpoint: ENDPOINT }));
  });
});
