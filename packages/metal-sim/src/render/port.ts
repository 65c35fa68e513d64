import type { Port } from '../models.js';
import type { SimulatorStore } from '../store.js';
import type { HrefWire, PortWire, VirtualNetworkWire } from '../wire.js';
import { hrefOf, link } from './common.js';
import { renderVirtualNetworkLite } from './virtual-network.js';

/**
 * A port. Without `include` the API links a port's VLANs as `{href}` stubs; with
 * `include=virtual_networks` / `native_virtual_network` they come whole.
 */
export function renderPort(store: SimulatorStore, port: Port, include: ReadonlySet<string>): PortWire {
  const vlan = (vlanId: string, key: string): HrefWire | VirtualNetworkWire =>
    include.has(key) ? renderVirtualNetworkLite(store, store.vlanOf(vlanId)) : link('virtual-networks', vlanId);
  const wire: PortWire = {
    id: port.id,
    href: hrefOf('ports', port.id),
    name: port.name,
    type: port.kind === 'bond' ? 'NetworkBondPort' : 'NetworkPort',
    data:
      port.kind === 'bond'
        ? { bonded: store.bondMembers(port).some((m) => m.bonded) }
        : { bonded: port.bonded, ...(port.mac === undefined ? {} : { mac: port.mac }) },
    disbond_operation_supported: disbondSupported(store, port),
    virtual_networks: port.vlans.map((a) => vlan(a.vlanId, 'virtual_networks')),
  };
  if (port.kind === 'bond') wire.network_type = store.networkTypeOf(port);
  else wire.bond = { id: store.bondOf(port).id, name: port.bondName };
  if (port.nativeVlanId !== undefined) wire.native_virtual_network = vlan(port.nativeVlanId, 'native_virtual_network');
  return wire;
}

/** Mirrors the disbond rule: a layer-3 bond keeps its first member and cannot be unbonded as a whole. */
function disbondSupported(store: SimulatorStore, port: Port): boolean {
  const bond = store.bondOf(port);
  if (port.kind === 'bond') return bond.layer2;
  if (bond.layer2) return true;
  return store.bondMembers(bond)[0]?.id !== port.id;
}
