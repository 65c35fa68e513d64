// The control-plane endpoint announcer: a cluster's VIP on a VLAN, held by keepalived (VRRP) on one
// control-plane machine at a time (docs/clusters-on-the-vlan.md). Rendered from the endpoint (address,
// prefix, port, VLAN, virtual router id) and the machine's ports, found by Metal port name as the
// network configuration is: the files carry port placeholders the boot script resolves. Pure and
// deterministic: the injected part's hash depends on it.
import { isIP } from 'node:net';
import {
  ANNOUNCER_COMMANDS,
  APISERVER_CHECK_PATH,
  KEEPALIVED_CONF_PATH,
  NOTIFY_SCRIPT_PATH,
  renderApiserverCheck,
  renderKeepalivedConf,
  renderNotifyScript,
} from './keepalived.js';
import { planInterfaces } from './topology.js';
import type { PlannedInterface } from './topology.js';
import type { PortConfig, RenderedFile } from './types.js';
import { validatePorts } from './validate.js';
import type { ConfigIssue } from './validate.js';

export interface EndpointAnnouncerInput {
  /** The VIP: an IPv4 address (the cluster's ClusterEndpoint status.address). */
  address: string;
  /** The VIP's prefix length on the VLAN (its pool's). */
  prefix: number;
  /** The API server port (6443 by default), checked on 127.0.0.1. */
  port: number;
  /** The VLAN (Metal vxlan) the VIP lives on: the machine must have an IPv4 address on it. */
  vxlan: number;
  /** VRRP virtual router id, 1-255, unique per VLAN among clusters. */
  virtualRouterID: number;
  /** The machine's ports, as given to renderMachineNetwork. */
  ports: readonly PortConfig[];
  /** VRRP advertisement interval in whole seconds (1-255); default 1. */
  advertIntervalSec?: number;
}

/** The announcer for one machine: files to write (with placeholders) and commands to run after the network. */
export interface RenderedAnnouncer {
  version: 1;
  /** The OS interface (placeholder) that holds the VIP, e.g. `@port:bond0@.1000`. */
  interface: string;
  files: RenderedFile[];
  /** Shell lines for runcmd, after the network step and before the bootstrap's own commands. */
  commands: string[];
}

export const AnnouncerIssueCode = {
  InvalidEndpointAddress: 'InvalidEndpointAddress',
  EndpointAddressNotIPv4: 'EndpointAddressNotIPv4',
  InvalidEndpointPrefix: 'InvalidEndpointPrefix',
  InvalidEndpointPort: 'InvalidEndpointPort',
  InvalidVirtualRouterID: 'InvalidVirtualRouterID',
  InvalidAdvertInterval: 'InvalidAdvertInterval',
  InvalidEndpointVlan: 'InvalidEndpointVlan',
  /** No port of the machine carries the endpoint's VLAN. */
  EndpointVlanNotOnMachine: 'EndpointVlanNotOnMachine',
  /** The VLAN interface has no IPv4 address: VRRP adverts need a source address. */
  EndpointVlanWithoutAddress: 'EndpointVlanWithoutAddress',
  /** The VIP is outside every subnet the machine has on the VLAN: peers would need a route to it. */
  EndpointAddressOutsideVlan: 'EndpointAddressOutsideVlan',
  /** The VIP is the machine's own address on the VLAN. */
  EndpointAddressIsMachineAddress: 'EndpointAddressIsMachineAddress',
} as const;
export type AnnouncerIssueCode = (typeof AnnouncerIssueCode)[keyof typeof AnnouncerIssueCode];

/** A reason the announcer cannot be rendered; port issues keep the network configuration's codes. */
export interface AnnouncerIssue {
  code: AnnouncerIssueCode | ConfigIssue['code'];
  path: (string | number)[];
  message: string;
}

export type AnnouncerOutcome = { kind: 'rendered'; announcer: RenderedAnnouncer } | { kind: 'invalid'; issues: AnnouncerIssue[] };

export const DEFAULT_ADVERT_INTERVAL_SEC = 1;

export function renderEndpointAnnouncer(input: EndpointAnnouncerInput): AnnouncerOutcome {
  const advertIntervalSec = input.advertIntervalSec ?? DEFAULT_ADVERT_INTERVAL_SEC;
  const issues: AnnouncerIssue[] = [...endpointIssues(input, advertIntervalSec), ...validatePorts(input.ports)];
  if (issues.length > 0) return { kind: 'invalid', issues };
  const found = vlanInterface(input);
  if (found.kind === 'invalid') return found;
  const iface = found.iface.name;
  return {
    kind: 'rendered',
    announcer: {
      version: 1,
      interface: iface,
      files: [
        {
          path: KEEPALIVED_CONF_PATH,
          mode: '0644',
          content: renderKeepalivedConf({ ...input, interface: iface, advertIntervalSec }),
        },
        { path: APISERVER_CHECK_PATH, mode: '0755', content: renderApiserverCheck(input.port) },
        { path: NOTIFY_SCRIPT_PATH, mode: '0755', content: renderNotifyScript() },
      ],
      commands: [...ANNOUNCER_COMMANDS],
    },
  };
}

function inRange(value: number, min: number, max: number): boolean {
  return Number.isInteger(value) && value >= min && value <= max;
}

function endpointIssues(input: EndpointAnnouncerInput, advertIntervalSec: number): AnnouncerIssue[] {
  const issues: AnnouncerIssue[] = [];
  const family = isIP(input.address);
  if (family === 0) {
    issues.push({ code: AnnouncerIssueCode.InvalidEndpointAddress, path: ['address'], message: `"${input.address}" is not an IP address` });
  } else if (family === 6) {
    issues.push({
      code: AnnouncerIssueCode.EndpointAddressNotIPv4,
      path: ['address'],
      message: `endpoint address ${input.address} is IPv6: the VIP announcer supports IPv4 endpoints only for now`,
    });
  }
  if (!inRange(input.prefix, 1, 32)) {
    issues.push({ code: AnnouncerIssueCode.InvalidEndpointPrefix, path: ['prefix'], message: `prefix ${input.prefix} is outside 1-32` });
  }
  if (!inRange(input.port, 1, 65535)) {
    issues.push({ code: AnnouncerIssueCode.InvalidEndpointPort, path: ['port'], message: `port ${input.port} is outside 1-65535` });
  }
  if (!inRange(input.virtualRouterID, 1, 255)) {
    issues.push({
      code: AnnouncerIssueCode.InvalidVirtualRouterID,
      path: ['virtualRouterID'],
      message: `virtual router id ${input.virtualRouterID} is outside 1-255`,
    });
  }
  if (!inRange(advertIntervalSec, 1, 255)) {
    issues.push({
      code: AnnouncerIssueCode.InvalidAdvertInterval,
      path: ['advertIntervalSec'],
      message: `advertisement interval ${advertIntervalSec} s is not a whole number of seconds in 1-255`,
    });
  }
  if (!inRange(input.vxlan, 1, 4094)) {
    issues.push({
      code: AnnouncerIssueCode.InvalidEndpointVlan,
      path: ['vxlan'],
      message: `vxlan ${input.vxlan} is not a VLAN id (1-4094)`,
    });
  }
  return issues;
}

/** The interface the network configuration puts the VLAN on, checked to be a home for the VIP. */
function vlanInterface(
  input: EndpointAnnouncerInput,
): { kind: 'found'; iface: PlannedInterface } | { kind: 'invalid'; issues: AnnouncerIssue[] } {
  const iface = planInterfaces(input.ports).find((i) => i.vlan?.vxlan === input.vxlan);
  if (iface === undefined) {
    const issue = {
      code: AnnouncerIssueCode.EndpointVlanNotOnMachine,
      path: ['vxlan'],
      message: `no port of this machine carries VLAN ${input.vxlan}, the control-plane endpoint's VLAN`,
    };
    return { kind: 'invalid', issues: [issue] };
  }
  const own = (iface.vlan?.addresses ?? []).filter((a) => isIP(a.address) === 4);
  const where = `VLAN ${input.vxlan} on port ${iface.port}`;
  if (own.length === 0) {
    const issue = {
      code: AnnouncerIssueCode.EndpointVlanWithoutAddress,
      path: ['vxlan'],
      message: `${where} has no IPv4 address: VRRP needs one to send its advertisements from`,
    };
    return { kind: 'invalid', issues: [issue] };
  }
  if (own.some((a) => a.address === input.address)) {
    const issue = {
      code: AnnouncerIssueCode.EndpointAddressIsMachineAddress,
      path: ['address'],
      message: `endpoint address ${input.address} is this machine's own address on ${where}`,
    };
    return { kind: 'invalid', issues: [issue] };
  }
  if (!own.some((a) => sameIPv4Subnet(a.address, input.address, a.prefix))) {
    const subnets = own.map((a) => `${a.address}/${a.prefix}`).join(', ');
    const issue = {
      code: AnnouncerIssueCode.EndpointAddressOutsideVlan,
      path: ['address'],
      message: `endpoint address ${input.address} is outside this machine's subnet on ${where} (${subnets})`,
    };
    return { kind: 'invalid', issues: [issue] };
  }
  return { kind: 'found', iface };
}

function ipv4ToNumber(address: string): number {
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

function sameIPv4Subnet(a: string, b: string, prefix: number): boolean {
  const size = 2 ** (32 - prefix);
  return Math.floor(ipv4ToNumber(a) / size) === Math.floor(ipv4ToNumber(b) / size);
}
