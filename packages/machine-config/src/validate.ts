// Checks that make rendering safe: every value that ends up in a config file or a shell line of the
// rendered files is an address, a number or a plain name. The controller validates the user's intent
// (network type combinations) earlier; this is the last line before text is produced.
import { isIP } from 'node:net';
import { RENDERER_NAMES } from './types.js';
import type { MachineNetworkConfig, NetworkAddress, NetworkRoute, PortConfig, VlanConfig } from './types.js';

export const ConfigIssueCode = {
  InvalidPortName: 'InvalidPortName',
  DuplicatePort: 'DuplicatePort',
  DuplicateVlan: 'DuplicateVlan',
  InvalidVlanId: 'InvalidVlanId',
  MultipleNativeVlans: 'MultipleNativeVlans',
  InvalidAddress: 'InvalidAddress',
  InvalidPrefix: 'InvalidPrefix',
  InvalidRoute: 'InvalidRoute',
  InvalidMtu: 'InvalidMtu',
  InvalidNameserver: 'InvalidNameserver',
  InvalidSearchDomain: 'InvalidSearchDomain',
  InvalidRenderer: 'InvalidRenderer',
  InvalidMetadataUrl: 'InvalidMetadataUrl',
  InterfaceNameTooLong: 'InterfaceNameTooLong',
} as const;
export type ConfigIssueCode = (typeof ConfigIssueCode)[keyof typeof ConfigIssueCode];

/** A reason the configuration cannot be rendered, zod style: code, path into the config, message. */
export interface ConfigIssue {
  code: ConfigIssueCode;
  path: (string | number)[];
  message: string;
}

const PORT_NAME = /^[a-z][a-z0-9]{0,14}$/;
const DOMAIN = /^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$/;
// Linux IFNAMSIZ - 1. With Equinix's udev rules the OS names equal the Metal names.
const MAX_INTERFACE_NAME = 15;

export function validateMachineNetworkConfig(config: MachineNetworkConfig): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (!RENDERER_NAMES.includes(config.renderer)) {
    issues.push({ code: ConfigIssueCode.InvalidRenderer, path: ['renderer'], message: `unknown renderer "${String(config.renderer)}"` });
  }
  if (!isSafeUrl(config.metadataUrl)) {
    issues.push({
      code: ConfigIssueCode.InvalidMetadataUrl,
      path: ['metadataUrl'],
      message: `metadata URL "${config.metadataUrl}" is not a plain http(s) URL`,
    });
  }
  issues.push(...validatePorts(config.ports));
  return issues;
}

/** The ports' own rules (names, VLAN ids, addresses, routes, MTUs): shared with the endpoint announcer. */
export function validatePorts(ports: readonly PortConfig[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const seenPorts = new Set<string>();
  ports.forEach((port, p) => {
    const at = ['ports', p];
    if (!PORT_NAME.test(port.name)) {
      issues.push({
        code: ConfigIssueCode.InvalidPortName,
        path: [...at, 'name'],
        message: `port name "${port.name}" is not a Metal port name like bond0 or eth1`,
      });
    }
    if (seenPorts.has(port.name)) {
      issues.push({ code: ConfigIssueCode.DuplicatePort, path: [...at, 'name'], message: `port ${port.name} is listed twice` });
    }
    seenPorts.add(port.name);
    const seenVlans = new Set<number>();
    let natives = 0;
    port.vlans.forEach((vlan, v) => {
      const vat = [...at, 'vlans', v];
      if (!Number.isInteger(vlan.vxlan) || vlan.vxlan < 1 || vlan.vxlan > 4094) {
        issues.push({
          code: ConfigIssueCode.InvalidVlanId,
          path: [...vat, 'vxlan'],
          message: `vxlan ${vlan.vxlan} is not a VLAN id (1-4094)`,
        });
      } else if (!vlan.native && `${port.name}.${vlan.vxlan}`.length > MAX_INTERFACE_NAME) {
        issues.push({
          code: ConfigIssueCode.InterfaceNameTooLong,
          path: [...vat, 'vxlan'],
          message: `interface ${port.name}.${vlan.vxlan} is longer than ${MAX_INTERFACE_NAME} characters`,
        });
      }
      if (seenVlans.has(vlan.vxlan)) {
        issues.push({
          code: ConfigIssueCode.DuplicateVlan,
          path: [...vat, 'vxlan'],
          message: `vxlan ${vlan.vxlan} is listed twice on port ${port.name}`,
        });
      }
      seenVlans.add(vlan.vxlan);
      if (vlan.native) natives += 1;
      issues.push(...vlanIssues(vlan, vat));
    });
    if (natives > 1) {
      issues.push({
        code: ConfigIssueCode.MultipleNativeVlans,
        path: [...at, 'vlans'],
        message: `port ${port.name} has ${natives} native VLANs; at most one is untagged`,
      });
    }
  });
  return issues;
}

function vlanIssues(vlan: VlanConfig, at: (string | number)[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  vlan.addresses.forEach((a, i) => issues.push(...addressIssues(a, [...at, 'addresses', i])));
  vlan.routes.forEach((r, i) => issues.push(...routeIssues(r, [...at, 'routes', i])));
  if (vlan.mtu !== undefined && (!Number.isInteger(vlan.mtu) || vlan.mtu < 1280 || vlan.mtu > 9000)) {
    issues.push({ code: ConfigIssueCode.InvalidMtu, path: [...at, 'mtu'], message: `mtu ${vlan.mtu} is outside 1280-9000` });
  }
  vlan.nameservers?.addresses.forEach((ns, i) => {
    if (isIP(ns) === 0) {
      issues.push({
        code: ConfigIssueCode.InvalidNameserver,
        path: [...at, 'nameservers', 'addresses', i],
        message: `nameserver "${ns}" is not an IP address`,
      });
    }
  });
  vlan.nameservers?.search?.forEach((d, i) => {
    if (!DOMAIN.test(d)) {
      issues.push({
        code: ConfigIssueCode.InvalidSearchDomain,
        path: [...at, 'nameservers', 'search', i],
        message: `search domain "${d}" is not a domain name`,
      });
    }
  });
  return issues;
}

function addressIssues(a: NetworkAddress, at: (string | number)[]): ConfigIssue[] {
  const family = isIP(a.address);
  const issues: ConfigIssue[] = [];
  if (family === 0) {
    issues.push({ code: ConfigIssueCode.InvalidAddress, path: [...at, 'address'], message: `"${a.address}" is not an IP address` });
    return issues;
  }
  const max = family === 4 ? 32 : 128;
  if (!Number.isInteger(a.prefix) || a.prefix < 1 || a.prefix > max) {
    issues.push({
      code: ConfigIssueCode.InvalidPrefix,
      path: [...at, 'prefix'],
      message: `prefix ${a.prefix} is outside 1-${max} for ${a.address}`,
    });
  }
  if (a.gateway !== undefined && isIP(a.gateway) !== family) {
    issues.push({
      code: ConfigIssueCode.InvalidAddress,
      path: [...at, 'gateway'],
      message: `gateway "${a.gateway}" is not an IPv${family} address`,
    });
  }
  return issues;
}

function routeIssues(r: NetworkRoute, at: (string | number)[]): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const family = isIP(r.via);
  if (family === 0) {
    issues.push({ code: ConfigIssueCode.InvalidRoute, path: [...at, 'via'], message: `route via "${r.via}" is not an IP address` });
  }
  if (r.to !== 'default') {
    const [net, prefix, ...rest] = r.to.split('/');
    const netFamily = isIP(net ?? '');
    const bits = Number(prefix);
    if (rest.length > 0 || netFamily === 0 || !/^[0-9]{1,3}$/.test(prefix ?? '') || bits > (netFamily === 4 ? 32 : 128)) {
      issues.push({
        code: ConfigIssueCode.InvalidRoute,
        path: [...at, 'to'],
        message: `route to "${r.to}" is neither a CIDR nor "default"`,
      });
    } else if (family !== 0 && netFamily !== family) {
      issues.push({
        code: ConfigIssueCode.InvalidRoute,
        path: [...at, 'to'],
        message: `route to ${r.to} via ${r.via} mixes address families`,
      });
    }
  }
  if (r.metric !== undefined && (!Number.isInteger(r.metric) || r.metric < 0 || r.metric > 4294967295)) {
    issues.push({
      code: ConfigIssueCode.InvalidRoute,
      path: [...at, 'metric'],
      message: `route metric ${r.metric} is not a non-negative integer`,
    });
  }
  return issues;
}

// The URL lands in a JSON file the boot script reads and passes to curl as one argument; still,
// nothing that needs quoting is allowed.
function isSafeUrl(url: string): boolean {
  return /^https?:\/\/[A-Za-z0-9.:[\]-]+(\/[A-Za-z0-9._~/-]*)?$/.test(url);
}
