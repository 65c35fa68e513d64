// The rules of a MachineNetworkTemplate that CEL on one port cannot express. Pure: the validating
// webhook formats the issues. What a port's settings may be is not decided here but by metal-api's
// port rules, through the Metal port planner asked against a freshly provisioned server of the plan
// the template is written for (with the rules new templates are held to): a template is refused
// here, in the planner's words, for anything the planner would refuse on the machine later. Left
// here: what spans ports without being about them (default routes, pools) and the port names.

import { isIPv6 } from 'node:net';
import type { MachineNetworkTemplateSpec, NetworkMode, Port } from '@metal-l2/api';
import {
  FOUR_PORT_ONLY,
  PORT_LAYOUTS,
  planPortChanges,
  portNamesOf,
  type Device,
  type Port as MetalPort,
  type PortCount,
  type PortPlanIssue,
  type VirtualNetwork,
} from '@metal-l2/metal-api';
import { resolvePorts } from '../resolved-ports.js';

export const TEMPLATE_ISSUE_CODES = {
  /** A port name no Metal server plan has (2-port: bond0, eth0, eth1; 4-port: also bond1, eth2, eth3). */
  unknownPort: 'UnknownPort',
  /** More than one default route of one address family across the template. */
  multipleDefaultRoutes: 'MultipleDefaultRoutes',
  /** addressesFromPools with an empty apiGroup. */
  emptyPoolApiGroup: 'EmptyPoolApiGroup',
  /**
   * The port planner refuses the ports: a port rule (metal-api port-rules.ts: VLANs on a port that
   * stays bonded, a port leaving a layer-2 bond, ...) or the plan itself; its code ends the message.
   */
  portPlan: 'PortPlan',
} as const;
export type TemplateIssueCode = (typeof TEMPLATE_ISSUE_CODES)[keyof typeof TEMPLATE_ISSUE_CODES];

export interface TemplateIssue {
  readonly code: TemplateIssueCode;
  /** Into the object: `spec.ports[1].vlans[0].routes[2].to`. */
  readonly path: string;
  readonly message: string;
}

export interface TemplateValidation {
  readonly issues: readonly TemplateIssue[];
  /** Allowed, but worth a word to whoever applies the template. */
  readonly warnings: readonly string[];
  /** The network type the ports amount to, when the template is valid. */
  readonly networkType: NetworkMode | undefined;
}

const KNOWN_PORTS = new Set(portNamesOf(4));

/**
 * Called for a new template (the webhook). Assumes the CRD schema and its CEL rules have passed
 * (the planner may say again what CEL said; it never is asked when CEL refused). Never throws.
 */
export function validateTemplate(spec: Pick<MachineNetworkTemplateSpec, 'ports'>): TemplateValidation {
  const issues: TemplateIssue[] = [];
  const ports = spec.ports;
  const resolved = resolvePorts(ports);
  const portCount = resolved.portCount;
  const fourPortNames = ports.map((p) => p.name).filter((name) => FOUR_PORT_ONLY.includes(name));
  const warnings = fourPortNames.map(
    (name) => `port ${name} exists on 4-port servers only (bond0 = eth0+eth2, bond1 = eth1+eth3); 2-port machines cannot use this template`,
  );

  ports.forEach((port, i) => {
    if (!KNOWN_PORTS.has(port.name)) {
      issues.push({
        code: TEMPLATE_ISSUE_CODES.unknownPort,
        path: `spec.ports[${i}].name`,
        message: `no Metal server has a port ${port.name}: 2-port plans have bond0, eth0, eth1; 4-port plans also bond1, eth2, eth3`,
      });
    }
  });
  checkDefaultRoutes(ports, issues);
  checkPools(ports, issues);

  const known = ports.map((port, index) => ({ port, index })).filter(({ port }) => KNOWN_PORTS.has(port.name));
  const plan = planPortChanges({
    device: freshDevice(portCount),
    desired: resolved.desired.filter((_, index) => KNOWN_PORTS.has(ports[index]?.name ?? '')),
    virtualNetworks: vlansOf(ports),
    metro: METRO,
    rules: 'template',
  });
  let networkType: NetworkMode | undefined;
  if (plan.kind === 'refused') {
    for (const issue of plan.issues) issues.push(fromPlannerIssue(issue, known));
  } else if (plan.to === undefined) {
    issues.push({
      code: TEMPLATE_ISSUE_CODES.portPlan,
      path: 'spec.ports',
      message: 'the port planner cannot name the network type these ports amount to',
    });
  } else {
    networkType = plan.to;
  }
  return { issues, warnings, networkType: issues.length === 0 ? networkType : undefined };
}

function checkDefaultRoutes(ports: readonly Port[], issues: TemplateIssue[]): void {
  const first = new Map<'IPv4' | 'IPv6', string>();
  ports.forEach((port, i) =>
    (port.vlans ?? []).forEach((vlan, j) =>
      (vlan.routes ?? []).forEach((route, k) => {
        const family = defaultRouteFamily(route);
        if (family === undefined) return;
        const where = `${port.name} VLAN ${vlan.vxlan}`;
        const earlier = first.get(family);
        if (earlier === undefined) {
          first.set(family, where);
          return;
        }
        issues.push({
          code: TEMPLATE_ISSUE_CODES.multipleDefaultRoutes,
          path: `spec.ports[${i}].vlans[${j}].routes[${k}].to`,
          message: `a second ${family} default route (via ${route.via} on ${where}); the template has one on ${earlier} already: a machine takes one default route per address family`,
        });
      }),
    ),
  );
}

/** The family of a default route (`default`, 0.0.0.0/0 or ::/0), or undefined for other routes. */
function defaultRouteFamily(route: { readonly to: string; readonly via: string }): 'IPv4' | 'IPv6' | undefined {
  const to = route.to.trim();
  if (to === 'default') return isIPv6(route.via) ? 'IPv6' : 'IPv4';
  const [address, prefix] = to.split('/');
  if (prefix === undefined || Number(prefix) !== 0 || address === undefined) return undefined;
  return isIPv6(address) ? 'IPv6' : 'IPv4';
}

function checkPools(ports: readonly Port[], issues: TemplateIssue[]): void {
  ports.forEach((port, i) =>
    (port.vlans ?? []).forEach((vlan, j) =>
      (vlan.addressesFromPools ?? []).forEach((pool, k) => {
        // Any IPAM provider's pool kind is fine; an empty group would mean the core group, which has none.
        if (pool.apiGroup.trim() !== '') return;
        issues.push({
          code: TEMPLATE_ISSUE_CODES.emptyPoolApiGroup,
          path: `spec.ports[${i}].vlans[${j}].addressesFromPools[${k}].apiGroup`,
          message: `pool ${pool.kind}/${pool.name} needs the API group of its IPAM provider (e.g. ipam.metal.x-k8s.io or ipam.cluster.x-k8s.io)`,
        });
      }),
    ),
  );
}

// A freshly provisioned server (layer 3, everything bonded) in a placeholder metro, with every
// VLAN the template names: the planner then judges only the ports, not the project.
const METRO = 'template';

function vlansOf(ports: readonly Port[]): VirtualNetwork[] {
  const vxlans = new Set(ports.flatMap((p) => (p.vlans ?? []).map((v) => v.vxlan)));
  return [...vxlans].map((vxlan) => ({ id: `vlan-${vxlan}`, vxlan, metro_code: METRO }));
}

function freshDevice(portCount: PortCount): Pick<Device, 'network_frozen' | 'metro' | 'network_ports'> {
  const bondOf = PORT_LAYOUTS[portCount];
  const bonds = [...new Set(Object.values(bondOf))];
  const port = (name: string, isBond: boolean): MetalPort => ({
    id: `port-${name}`,
    name,
    type: isBond ? 'NetworkBondPort' : 'NetworkPort',
    data: { bonded: true },
    ...(isBond ? { network_type: 'layer3' as const } : { bond: { id: `port-${bondOf[name] ?? ''}`, name: bondOf[name] ?? '' } }),
    virtual_networks: [],
  });
  return {
    network_frozen: false,
    metro: { code: METRO },
    network_ports: [...bonds.map((name) => port(name, true)), ...Object.keys(bondOf).map((name) => port(name, false))],
  };
}

/** A planner issue at `desired[n].field` as an issue at the template's `spec.ports[i].field`. */
function fromPlannerIssue(issue: PortPlanIssue, known: readonly { readonly port: Port; readonly index: number }[]): TemplateIssue {
  const match = /^desired\[(\d+)\](?:\.(\w+))?$/.exec(issue.path);
  const entry = match === null ? undefined : known[Number(match[1])];
  let path = 'spec.ports';
  if (entry !== undefined) {
    const field = match?.[2];
    const nativeIndex = (entry.port.vlans ?? []).findIndex((v) => v.native === true);
    path =
      field === undefined
        ? `spec.ports[${entry.index}]`
        : field === 'nativeVlan' && nativeIndex >= 0
          ? `spec.ports[${entry.index}].vlans[${nativeIndex}].native`
          : `spec.ports[${entry.index}].${field}`;
  }
  return { code: TEMPLATE_ISSUE_CODES.portPlan, path, message: `${issue.message} (${issue.code})` };
}
