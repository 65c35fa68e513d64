import type { AddressRecord, MachineNetworkSpec } from '@metal-l2/api';
import type { MachineNetworkConfig, PortConfig } from '@metal-l2/machine-config';

/**
 * The machine-config input for a MachineNetwork: its spec snapshot with the allocated addresses
 * filled in per (port, VLAN). Physical ports the spec lists without `bonded` follow their bond.
 */
export function networkConfigOf(
  spec: Pick<MachineNetworkSpec, 'ports' | 'os'>,
  addresses: readonly AddressRecord[],
  metadataUrl: string,
): MachineNetworkConfig {
  const bond0 = spec.ports.find((p) => p.name === 'bond0');
  const ports: PortConfig[] = spec.ports.map((port) => {
    const isBond = port.name.startsWith('bond');
    return {
      name: port.name,
      bonded: port.bonded ?? (isBond ? true : (bond0?.bonded ?? true)),
      layer2: isBond ? (port.layer2 ?? false) : false,
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
