// What the user asks for, checked against the device it is meant for: defaults filled in, vxlan
// numbers resolved to the VLANs of the device's metro, and every rule the Metal API would enforce
// (or that would leave the machine unreachable; port-rules.ts) reported as an issue before any
// call is made.

import type { VirtualNetwork } from '../types.js';
import { PORT_PLAN_ISSUE_CODES } from './port-layout.js';
import type { PortPlanIssue } from './port-layout.js';
import { settleDefaults } from './port-layout.js';
import { checkPortRules, type PortUnderRules, type RuleScope } from './port-rules.js';
import { sortVlans } from './port-state.js';
import type { ObservedPort, PortSettings, VlanRef } from './port-state.js';

/** One port as a MachineNetworkTemplate describes it, with VLANs by vxlan. */
export interface DesiredPort {
  /** The Metal port name: bond0, eth0, eth1, ... */
  name: string;
  /**
   * Bond ports: whether the bond is up (false = layer2-individual). Physical ports: whether the
   * port stays in its bond (false on eth1 = hybrid). Defaults: true on bond ports; a physical
   * port follows its bond.
   */
  bonded?: boolean;
  /** Bond ports only: layer 2 (the port loses its public addresses). Default false. */
  layer2?: boolean;
  /** vxlan numbers of the VLANs to assign. Default none. */
  vlans?: readonly number[];
  /** vxlan of the native (untagged) VLAN; must be one of `vlans`. */
  nativeVlan?: number;
}

export interface ResolveContext {
  /** The project's VLANs, any metro. */
  virtualNetworks: readonly VirtualNetwork[];
  /** The device's metro code; needed only when VLANs are asked for. */
  metro: string | undefined;
  /** 'template': also the rules new templates are held to (port-rules.ts); default 'device'. */
  rules?: RuleScope;
}

/**
 * Desired settings for every observed port, keyed by port name: ports the input does not mention
 * get the defaults (bond ports bonded in layer 3 without VLANs, physical ports following their
 * bond), which is how a freshly provisioned server looks.
 */
export function resolveDesired(
  desired: readonly DesiredPort[],
  observed: readonly ObservedPort[],
  context: ResolveContext,
): { settings: Map<string, PortSettings>; issues: PortPlanIssue[] } {
  const issues: PortPlanIssue[] = [];
  const specs = indexSpecs(desired, observed, issues);
  const settings = new Map<string, PortSettings>();

  // Bond ports first: physical ports default to their bond's setting.
  for (const port of observed.filter((p) => p.isBond)) {
    const spec = specs.get(port.name);
    settings.set(port.name, { ...settleDefaults(true, spec?.port, undefined), ...resolveVlans(spec, context, issues) });
  }
  for (const port of observed.filter((p) => !p.isBond)) {
    const spec = specs.get(port.name);
    const bond = port.bondName === undefined ? undefined : settings.get(port.bondName);
    settings.set(port.name, { ...settleDefaults(false, spec?.port, bond), ...resolveVlans(spec, context, issues) });
  }

  for (const port of observed) {
    const setting = settings.get(port.name);
    if (setting !== undefined)
      checkPort({ port, setting, spec: specs.get(port.name), observed, settings, rules: context.rules ?? 'device' }, issues);
  }
  return { settings, issues };
}

interface IndexedSpec {
  port: DesiredPort;
  path: string;
}

function indexSpecs(desired: readonly DesiredPort[], observed: readonly ObservedPort[], issues: PortPlanIssue[]): Map<string, IndexedSpec> {
  const specs = new Map<string, IndexedSpec>();
  desired.forEach((port, index) => {
    const path = `desired[${index}]`;
    if (specs.has(port.name)) {
      issues.push({ code: PORT_PLAN_ISSUE_CODES.duplicatePort, path: `${path}.name`, message: `port ${port.name} is listed twice` });
      return;
    }
    if (!observed.some((p) => p.name === port.name)) {
      const names = observed.map((p) => p.name).join(', ');
      issues.push({
        code: PORT_PLAN_ISSUE_CODES.unknownPort,
        path: `${path}.name`,
        message: `the device has no port ${port.name} (it has ${names === '' ? 'none' : names})`,
      });
      return;
    }
    specs.set(port.name, { port, path });
  });
  return specs;
}

function resolveVlans(
  spec: IndexedSpec | undefined,
  context: ResolveContext,
  issues: PortPlanIssue[],
): Pick<PortSettings, 'vlans' | 'nativeVlan'> {
  if (spec === undefined) return { vlans: [], nativeVlan: undefined };
  const vxlans = spec.port.vlans ?? [];
  const vlans: VlanRef[] = [];
  vxlans.forEach((vxlan, index) => {
    const path = `${spec.path}.vlans[${index}]`;
    if (vxlans.indexOf(vxlan) !== index) {
      issues.push({ code: PORT_PLAN_ISSUE_CODES.duplicateVlan, path, message: `VLAN ${vxlan} is listed twice on ${spec.port.name}` });
      return;
    }
    const vlan = findVlan(vxlan, context, { path, issues });
    if (vlan !== undefined) vlans.push(vlan);
  });
  const native = spec.port.nativeVlan;
  return {
    vlans: sortVlans(vlans),
    nativeVlan: native === undefined ? undefined : vlans.find((v) => v.vxlan === native),
  };
}

function findVlan(vxlan: number, context: ResolveContext, at: { path: string; issues: PortPlanIssue[] }): VlanRef | undefined {
  if (context.metro === undefined) {
    at.issues.push({
      code: PORT_PLAN_ISSUE_CODES.incompleteDevice,
      path: 'device.metro',
      message: `the device's metro is unknown, so VLAN ${vxlan} cannot be resolved`,
    });
    return undefined;
  }
  const metro = context.metro.toLowerCase();
  const sameVxlan = context.virtualNetworks.filter((vn) => vn.vxlan === vxlan && vn.id !== undefined);
  const local = sameVxlan.find((vn) => metroOf(vn) === metro);
  if (local?.id !== undefined) return { id: local.id, vxlan };
  if (sameVxlan.length > 0) {
    const elsewhere = [...new Set(sameVxlan.map(metroOf))].join(', ');
    at.issues.push({
      code: PORT_PLAN_ISSUE_CODES.vlanInOtherMetro,
      path: at.path,
      message: `VLAN ${vxlan} exists in ${elsewhere}, not in the device's metro ${metro}`,
    });
    return undefined;
  }
  at.issues.push({ code: PORT_PLAN_ISSUE_CODES.vlanNotFound, path: at.path, message: `the project has no VLAN ${vxlan}` });
  return undefined;
}

function metroOf(vn: VirtualNetwork): string {
  return (vn.metro_code ?? vn.metro?.code ?? '').toLowerCase();
}

interface PortCheck {
  port: ObservedPort;
  setting: PortSettings;
  spec: IndexedSpec | undefined;
  observed: readonly ObservedPort[];
  settings: ReadonlyMap<string, PortSettings>;
  rules: RuleScope;
}

/** The rules on what a port's settings may be (port-rules.ts), then what this device allows. */
function checkPort(c: PortCheck, issues: PortPlanIssue[]): void {
  const { port, setting, spec } = c;
  const at = (field: string): string => (spec === undefined ? `device.ports.${port.name}` : `${spec.path}.${field}`);
  const bondSetting = port.bondName === undefined ? undefined : c.settings.get(port.bondName);
  const underRules: PortUnderRules = {
    name: port.name,
    isBond: port.isBond,
    bonded: setting.bonded,
    layer2: setting.layer2,
    vlanCount: setting.vlans.length,
    hasNativeVlan: setting.nativeVlan !== undefined,
    asked: spec?.port,
    bond:
      port.bondName === undefined
        ? undefined
        : { name: port.bondName, bonded: bondSetting?.bonded ?? false, layer2: bondSetting?.layer2 ?? false },
    firstOfBond: port.bondName !== undefined && c.observed.find((p) => p.bondName === port.bondName)?.name === port.name,
    members: port.isBond ? c.observed.filter((p) => p.bondName === port.name).map((p) => p.name) : [],
  };
  for (const issue of checkPortRules(underRules, c.rules)) issues.push({ code: issue.code, path: at(issue.field), message: issue.message });

  // The API reports disbond_operation_supported for the port's current mode (no for a layer-3
  // bond and its first port); when the bond converts to layer 2 first, the answer no longer holds.
  const bondName = port.isBond ? port.name : port.bondName;
  const bondNow = c.observed.find((p) => p.name === bondName);
  const convertsToLayer2 = bondNow !== undefined && !bondNow.layer2 && c.settings.get(bondNow.name)?.layer2 === true;
  const leavesBond = port.bonded && !setting.bonded;
  if (leavesBond && port.disbondSupported === false && !convertsToLayer2) {
    issues.push({
      code: PORT_PLAN_ISSUE_CODES.disbondNotSupported,
      path: at('bonded'),
      message: `${port.name} does not support leaving its bond`,
    });
  }
}
