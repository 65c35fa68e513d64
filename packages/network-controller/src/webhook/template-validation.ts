// The rules of a MachineNetworkTemplate that span ports, which CEL on one port cannot express.
// Pure: the validating webhook formats the issues, and the reconciler may reuse them for its
// InvalidTemplate condition. The Metal port planner (metal-api) is asked too, against a freshly
// provisioned server of the plan the template is written for, so a template is refused here, with
// the planner's words, for anything the planner would refuse on the machine later.

import { isIPv6 } from 'node:net';
import type { MachineNetworkTemplateSpec, NetworkMode, Port } from '@metal-l2/api';
import {
  effectivePorts,
  FOUR_PORT_ONLY,
  PORT_LAYOUTS,
  planPortChanges,
  portNamesOf,
  type Device,
  type EffectivePort,
  type Port as MetalPort,
  type PortCount,
  type PortPlanIssue,
  type VirtualNetwork,
} from '@metal-l2/metal-api';
import { resolvePorts } from '../port-rules.js';

export const TEMPLATE_ISSUE_CODES = {
  /** A port name no Metal server plan has (2-port: bond0, eth0, eth1; 4-port: also bond1, eth2, eth3). */
  unknownPort: 'UnknownPort',
  /** More than one default route of one address family across the template. */
  multipleDefaultRoutes: 'MultipleDefaultRoutes',
  /** VLANs on an eth port that stays in its bond. */
  vlanOnBondedPort: 'VlanOnBondedPort',
  /** VLANs on a disbonded bond (layer2-individual): they belong on its eth ports. */
  vlanOnDisbondedBond: 'VlanOnDisbondedBond',
  /** An eth port leaving a bond that stays bonded in layer 2 (hybrid needs the bond in layer 3). */
  portLeavesLayer2Bond: 'PortLeavesLayer2Bond',
  /** addressesFromPools with an empty apiGroup. */
  emptyPoolApiGroup: 'EmptyPoolApiGroup',
  /** The port planner refuses the ports (its code is in the message's context). */
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
 * Called for a new template (the webhook) or a template a machine uses (the reconciler). Assumes
 * the CRD schema and its CEL rules have passed (per-port rules are not repeated). Never throws.
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
  const effective = new Map(effectivePorts(resolved.desired, portCount).map((e) => [e.name, e]));
  ports.forEach((port, i) => checkPort({ port, index: i, effective }, issues));
  checkDefaultRoutes(ports, issues);
  checkPools(ports, issues);

  const known = ports.map((port, index) => ({ port, index })).filter(({ port }) => KNOWN_PORTS.has(port.name));
  const plan = planPortChanges({
    device: freshDevice(portCount),
    desired: resolved.desired.filter((_, index) => KNOWN_PORTS.has(ports[index]?.name ?? '')),
    virtualNetworks: vlansOf(ports),
    metro: METRO,
  });
  let networkType: NetworkMode | undefined;
  if (plan.kind === 'refused') {
    for (const issue of plan.issues) {
      const mapped = fromPlannerIssue(issue, known);
      // Our own rules say the same thing about the same field in the template's words.
      if (!issues.some((own) => own.path === mapped.path)) issues.push(mapped);
    }
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

interface PortCheck {
  readonly port: Port;
  readonly index: number;
  readonly effective: ReadonlyMap<string, EffectivePort>;
}

function checkPort(c: PortCheck, issues: TemplateIssue[]): void {
  const { port, index } = c;
  const self = c.effective.get(port.name);
  if (self === undefined) return;
  const hasVlans = (port.vlans ?? []).length > 0;
  const at = `spec.ports[${index}]`;
  if (self.isBond) {
    if (self.layer2 && !self.bonded && hasVlans) {
      const members = membersOf(port.name, c.effective).join(' and ');
      issues.push({
        code: TEMPLATE_ISSUE_CODES.vlanOnDisbondedBond,
        path: `${at}.vlans`,
        message: `${port.name} is disbonded (layer2-individual: layer2 with bonded: false), so it carries no VLANs: list them on ${members} instead`,
      });
    }
    return;
  }
  const bond = self.bond === undefined ? undefined : c.effective.get(self.bond);
  if (bond === undefined) return;
  if (self.bonded && hasVlans) {
    issues.push({
      code: TEMPLATE_ISSUE_CODES.vlanOnBondedPort,
      path: `${at}.vlans`,
      message:
        `${port.name} stays in ${self.bond ?? 'its bond'}, so it carries no VLANs of its own: list them on ${self.bond ?? 'the bond'}, ` +
        `or take ${port.name} out of the bond (bonded: false on ${port.name} for hybrid, or layer2: true and bonded: false on ${self.bond ?? 'the bond'} for layer2-individual)`,
    });
  }
  if (!self.bonded && bond.bonded && bond.layer2) {
    issues.push({
      code: TEMPLATE_ISSUE_CODES.portLeavesLayer2Bond,
      path: `${at}.bonded`,
      message:
        `${port.name} leaves ${self.bond ?? 'its bond'} while ${self.bond ?? 'the bond'} stays bonded in layer 2: a port leaves its bond only in hybrid mode, ` +
        `which keeps ${self.bond ?? 'the bond'} in layer 3 (drop layer2 on ${self.bond ?? 'the bond'}), or with the whole bond in layer2-individual (bonded: false on ${self.bond ?? 'the bond'})`,
    });
  }
}

function membersOf(bond: string, effective: ReadonlyMap<string, EffectivePort>): string[] {
  return [...effective.entries()].filter(([, e]) => e.bond === bond).map(([name]) => name);
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
