// What a port's settings may be, in one table: each rule once, with its issue code, the field it
// blames, its message and, when one port's fields can say it, the CEL rule the CRD checks it with
// (packages/api reads PORT_CEL_RULES, so the earliest gate and the later ones share the words).
// The planner applies the table to every port of a device (resolveDesired); the network
// controller's template webhook gets it through the planner, against a freshly provisioned server;
// the defaults the rules judge come from port-layout (settleDefaults), as the renderers' do.

import { PORT_PLAN_ISSUE_CODES, type PortPlanIssueCode } from './port-layout.js';

/** One port as the rules see it: its settings once the defaults are applied, and its bond's. */
export interface PortUnderRules {
  readonly name: string;
  readonly isBond: boolean;
  readonly bonded: boolean;
  /** Bond ports only; always false on physical ports. */
  readonly layer2: boolean;
  /** The VLANs it ends up carrying (those that resolved), and whether one of them is native. */
  readonly vlanCount: number;
  readonly hasNativeVlan: boolean;
  /** What the description said, before defaults (undefined: the port is not listed). */
  readonly asked:
    | { readonly layer2?: boolean | undefined; readonly vlans?: readonly number[] | undefined; readonly nativeVlan?: number | undefined }
    | undefined;
  /** Physical ports: their bond (name and settings); undefined when they have none. */
  readonly bond: { readonly name: string; readonly bonded: boolean; readonly layer2: boolean } | undefined;
  /** Physical ports: the first port of their bond (it carries a layer-3 bond's addresses). */
  readonly firstOfBond: boolean;
  /** Bond ports: their physical ports, in order. */
  readonly members: readonly string[];
}

export interface PortRuleIssue {
  readonly code: PortPlanIssueCode;
  /** The port's field to blame. */
  readonly field: 'bonded' | 'layer2' | 'vlans' | 'nativeVlan';
  readonly message: string;
}

/** Which rules apply: a device's plan, or a new template (which is also held to `templatesOnly` rules). */
export type RuleScope = 'device' | 'template';

interface PortRule {
  readonly code: PortPlanIssueCode;
  readonly field: PortRuleIssue['field'];
  /** True when the port breaks the rule. */
  readonly broken: (p: PortUnderRules) => boolean;
  readonly message: (p: PortUnderRules) => string;
  /** A CEL rule on one port (`port`: the Port object; `vlans`: its vlans list) for the CRD. */
  readonly cel?: { readonly on: 'port' | 'vlans'; readonly rule: string; readonly message: string };
  /**
   * Held against new templates only: MachineNetworks made before the rule keep being carried
   * out (the Metal API accepts the ports), so an upgrade changes nothing for running machines.
   */
  readonly templatesOnly?: true;
}

const bondOf = (p: PortUnderRules): string => p.bond?.name ?? 'its bond';

// The words each CEL rule and its later checks share.
const LAYER3_BOND_UNBONDED = 'a layer-3 bond cannot be unbonded: set layer2: true as well for layer2-individual, or keep bonded';
const NATIVE_ON_LAYER3 = 'a native VLAN needs a layer-2 port: a layer-3 bond (hybrid-bonded) carries tagged VLANs only';
const LAYER2_ON_ETH = 'layer2 applies to bond ports only: an eth port follows its bond; for hybrid mode set bonded: false on eth1';
const NATIVE_NEEDS_TWO =
  'a native VLAN needs at least one other (tagged) VLAN on the same port, as Equinix Metal requires; list a tagged VLAN beside it or drop native';
const firstPortLeaves = (port: string, bond: string): string =>
  `${port} leaves its bond only with the whole bond (set bonded: false and layer2: true on ${bond} for layer2-individual)`;

/**
 * In the order they are reported for one port (bond rules, then physical ones, then the native
 * VLAN; the two kinds never meet, so `layer2` on an eth port can come first, as in the CRD).
 */
const PORT_RULES: readonly PortRule[] = [
  {
    code: PORT_PLAN_ISSUE_CODES.layer2OnNonBondPort,
    field: 'layer2',
    broken: (p) => !p.isBond && p.asked?.layer2 === true,
    message: (p) => `${p.name}: ${LAYER2_ON_ETH}`,
    cel: { on: 'port', rule: "!has(self.layer2) || !self.layer2 || self.name.startsWith('bond')", message: LAYER2_ON_ETH },
  },
  {
    code: PORT_PLAN_ISSUE_CODES.layer3PortUnbonded,
    field: 'bonded',
    broken: (p) => p.isBond && !p.layer2 && !p.bonded,
    message: (p) => `${p.name}: ${LAYER3_BOND_UNBONDED}`,
    cel: {
      on: 'port',
      rule: "!self.name.startsWith('bond') || !has(self.bonded) || self.bonded || (has(self.layer2) && self.layer2)",
      message: LAYER3_BOND_UNBONDED,
    },
  },
  {
    code: PORT_PLAN_ISSUE_CODES.vlanOnUnbondedBond,
    field: 'vlans',
    broken: (p) => p.isBond && !p.bonded && p.vlanCount > 0,
    message: (p) =>
      `${p.name} is disbonded (layer2-individual: layer2 with bonded: false), so it carries no VLANs: list them on ${p.members.join(' and ')} instead`,
  },
  {
    code: PORT_PLAN_ISSUE_CODES.nativeVlanOnLayer3Port,
    field: 'nativeVlan',
    broken: (p) => p.isBond && !p.layer2 && p.hasNativeVlan,
    message: (p) => `${p.name}: ${NATIVE_ON_LAYER3}`,
    cel: {
      on: 'port',
      rule: "!self.name.startsWith('bond') || (has(self.layer2) && self.layer2) || !has(self.vlans) || self.vlans.all(v, !has(v.native) || !v.native)",
      message: NATIVE_ON_LAYER3,
    },
  },
  {
    code: PORT_PLAN_ISSUE_CODES.layer3PortUnbonded,
    field: 'bonded',
    // The first port of a layer-3 bond carries its addresses; only the others may leave (hybrid).
    broken: (p) => !p.isBond && p.firstOfBond && p.bond !== undefined && p.bond.bonded && !p.bond.layer2 && !p.bonded,
    message: (p) => `${p.name} is the first port of ${bondOf(p)}, which stays in layer 3: ${firstPortLeaves(p.name, bondOf(p))}`,
    // CEL knows no plan family: eth0 is the first port of bond0 on every plan.
    cel: { on: 'port', rule: "self.name != 'eth0' || !has(self.bonded) || self.bonded", message: firstPortLeaves('eth0', 'bond0') },
  },
  {
    code: PORT_PLAN_ISSUE_CODES.bondedPortWithoutBond,
    field: 'bonded',
    broken: (p) => !p.isBond && p.bonded && p.bond?.bonded !== true,
    message: (p) =>
      `${p.name} cannot be bonded: it ${p.bond === undefined ? 'belongs to no bond' : `belongs to ${p.bond.name}, which is disbonded`}`,
  },
  {
    code: PORT_PLAN_ISSUE_CODES.vlanOnBondedMember,
    field: 'vlans',
    broken: (p) => !p.isBond && p.bonded && p.vlanCount > 0,
    message: (p) =>
      `${p.name} stays in ${bondOf(p)}, so it carries no VLANs of its own: list them on ${p.bond?.name ?? 'the bond'}, ` +
      `or take ${p.name} out of the bond (bonded: false on ${p.name} for hybrid, or layer2: true and bonded: false on ${p.bond?.name ?? 'the bond'} for layer2-individual)`,
  },
  {
    code: PORT_PLAN_ISSUE_CODES.portLeavesLayer2Bond,
    field: 'bonded',
    broken: (p) => !p.isBond && !p.bonded && p.bond !== undefined && p.bond.bonded && p.bond.layer2,
    message: (p) => {
      const bond = bondOf(p);
      return (
        `${p.name} leaves ${bond} while ${bond} stays bonded in layer 2: a port leaves its bond only in hybrid mode, ` +
        `which keeps ${bond} in layer 3 (drop layer2 on ${bond}), or with the whole bond in layer2-individual (bonded: false on ${bond})`
      );
    },
    templatesOnly: true,
  },
  {
    code: PORT_PLAN_ISSUE_CODES.nativeVlanNotAssigned,
    field: 'nativeVlan',
    broken: (p) => p.asked?.nativeVlan !== undefined && !(p.asked.vlans ?? []).includes(p.asked.nativeVlan),
    message: (p) => `native VLAN ${p.asked?.nativeVlan ?? ''} is not among the VLANs of ${p.name}`,
  },
  {
    code: PORT_PLAN_ISSUE_CODES.nativeVlanNeedsTwoVlans,
    field: 'nativeVlan',
    broken: (p) =>
      p.asked?.nativeVlan !== undefined && (p.asked.vlans ?? []).includes(p.asked.nativeVlan) && (p.asked.vlans ?? []).length < 2,
    message: (p) => `${p.name}: ${NATIVE_NEEDS_TWO}`,
    cel: { on: 'vlans', rule: '!self.exists(v, has(v.native) && v.native) || self.size() >= 2', message: NATIVE_NEEDS_TWO },
  },
];

/** The rules `port` breaks, in PORT_RULES order. */
export function checkPortRules(port: PortUnderRules, scope: RuleScope): PortRuleIssue[] {
  const issues: PortRuleIssue[] = [];
  for (const rule of PORT_RULES) {
    if (rule.templatesOnly === true && scope !== 'template') continue;
    if (rule.broken(port)) issues.push({ code: rule.code, field: rule.field, message: rule.message(port) });
  }
  return issues;
}

/** The CRD's CEL rules on a Port (`port`) and on its vlans list (`vlans`) that come from PORT_RULES. */
export function portCelRules(on: 'port' | 'vlans'): { rule: string; message: string }[] {
  return PORT_RULES.flatMap((r) => (r.cel?.on === on ? [{ rule: r.cel.rule, message: r.cel.message }] : []));
}
