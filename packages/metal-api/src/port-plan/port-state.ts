// The planner's view of a port, on both sides of the diff: what the API reports (observed) and
// what the user asked for (desired, after defaults and VLAN resolution).

import type { Port, VirtualNetwork } from '../types.js';
import { PORT_PLAN_ISSUE_CODES } from './port-layout.js';
import type { PortPlanIssue } from './port-layout.js';
import type { PortShape } from './port-layout.js';

/** A VLAN as the planner handles it: its UUID (what calls send) and its vxlan (what people read). */
export interface VlanRef {
  id: string;
  vxlan: number | undefined;
}

/** The layer-2/3 settings of one port. */
export interface PortSettings {
  bonded: boolean;
  /** Bond ports only; always false on physical ports. */
  layer2: boolean;
  vlans: readonly VlanRef[];
  nativeVlan: VlanRef | undefined;
}

/** One port of the device, with what it is and how it is set. */
export interface ObservedPort extends PortSettings {
  id: string;
  name: string;
  isBond: boolean;
  /** Physical ports: the bond they belong to (`Port.bond.name`). */
  bondName: string | undefined;
  /** `disbond_operation_supported`; undefined when the API did not say. */
  disbondSupported: boolean | undefined;
}

const LAYER2_NETWORK_TYPES: readonly string[] = ['layer2-bonded', 'layer2-individual'];

/**
 * Turns the device's `network_ports` into planner ports, sorted by name (bond0, eth0, eth1, ...).
 * VLANs reported as bare `{href}` links are resolved through `virtualNetworks`.
 */
export function observePorts(
  ports: readonly Port[],
  virtualNetworks: readonly VirtualNetwork[],
): { ports: ObservedPort[]; issues: PortPlanIssue[] } {
  const issues: PortPlanIssue[] = [];
  if (ports.length === 0) {
    issues.push({
      code: PORT_PLAN_ISSUE_CODES.incompleteDevice,
      path: 'device.network_ports',
      message: 'the device reports no network ports',
    });
  }
  const observed: ObservedPort[] = [];
  ports.forEach((port, index) => {
    if (port.id === undefined || port.name === undefined) {
      issues.push({
        code: PORT_PLAN_ISSUE_CODES.incompleteDevice,
        path: `device.network_ports[${index}]`,
        message: 'a network port has no id or name',
      });
      return;
    }
    const isBond = port.type === 'NetworkBondPort';
    const vlans = (port.virtual_networks ?? []).map((vn) => vlanRefOf(vn, virtualNetworks)).filter((v): v is VlanRef => v !== undefined);
    const native = port.native_virtual_network === undefined ? undefined : vlanRefOf(port.native_virtual_network, virtualNetworks);
    observed.push({
      id: port.id,
      name: port.name,
      isBond,
      bondName: isBond ? undefined : port.bond?.name,
      bonded: port.data?.bonded ?? false,
      layer2: isBond && port.network_type !== undefined && LAYER2_NETWORK_TYPES.includes(port.network_type),
      vlans: sortVlans(vlans),
      nativeVlan: native,
      disbondSupported: port.disbond_operation_supported,
    });
  });
  observed.sort((a, b) => comparePortNames(a.name, b.name));
  return { ports: observed, issues };
}

/** The derivation's view of a port. */
export function shapeOf(port: Pick<ObservedPort, 'isBond'> & PortSettings): PortShape {
  return { isBond: port.isBond, bonded: port.bonded, layer2: port.layer2, vlanCount: port.vlans.length };
}

export function sortVlans(vlans: readonly VlanRef[]): VlanRef[] {
  return [...vlans].sort((a, b) => (a.vxlan ?? Infinity) - (b.vxlan ?? Infinity) || a.id.localeCompare(b.id));
}

/** bond0 < eth0 < eth1 < eth2 < eth10. */
export function comparePortNames(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

function vlanRefOf(vn: VirtualNetwork, catalog: readonly VirtualNetwork[]): VlanRef | undefined {
  const id = vn.id ?? idFromHref(vn.href);
  if (id === undefined) return undefined;
  return { id, vxlan: vn.vxlan ?? catalog.find((c) => c.id === id)?.vxlan };
}

/** `/metal/v1/virtual-networks/<uuid>` → `<uuid>`. */
function idFromHref(href: string | undefined): string | undefined {
  const last = href
    ?.split('/')
    .filter((part) => part !== '')
    .pop();
  return last === undefined || last === '' ? undefined : last;
}
