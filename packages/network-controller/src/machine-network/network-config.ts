import type { AddressRecord, MachineNetworkSpec } from '@metal-l2/api';
import type { MachineNetworkConfig, PortConfig } from '@metal-l2/machine-config';
import { resolvePorts } from '../port-rules.js';

/**
 * The machine-config input for a MachineNetwork: its spec snapshot with the allocated addresses
 * filled in per (port, VLAN). Physical ports the spec lists without `bonded` follow their bond
 * (port-rules: on 4-port plans eth1 and eth3 follow bond1).
 */
export function networkConfigOf(
  spec: Pick<MachineNetworkSpec, 'ports' | 'os'>,
  addresses: readonly AddressRecord[],
  metadataUrl: string,
): MachineNetworkConfig {
  const ports: PortConfig[] = resolvePorts(spec.ports).ports.map(({ port, bonded, layer2 }) => {
    return {
      name: port.name,
      bonded,
      layer2,
      vlans: (port.vlans ?? []).map((vlan) => ({
        vxlan: vlan.vxlan,
        native: vlan.native ?? false,
        addresses: addresses
          .filter((a) => a.port === port.name && a.vxlan === vlan.vxlan)
          .map((a) => ({ address: a.address, prefix: a.prefix, ...(a.gateway === undefined ? {} : { gateway: a.gateway }) })),
        routes: (vlan.routes ?? []).map((r) => ({ to: r.to, via: r.via, ...(r.metric === undefined ? {} : { metric: r.metric }) })),
        ...(vlan.mtu === undefined ? {} : { mtu: vlan.mtu }),
        ...(vlan.nameservers === undefined
          ? {}
          : {
              nameservers: {
                addresses: vlan.nameservers.addresses ?? [],
                ...(vlan.nameservers.search === undefined ? {} : { search: vlan.nameservers.search }),
              },
            }),
      })),
    };
  });
  return { ports, renderer: spec.os?.renderer ?? 'ifupdown', metadataUrl };
}
