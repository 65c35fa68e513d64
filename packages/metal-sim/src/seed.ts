// The seed: which metros, plans, projects and tokens exist when the simulator starts. Read from a
// YAML or JSON file (YAML is a superset of JSON, so one parser reads both) and checked field by
// field, so a typo in a seed file fails at start with the path of the bad field.

import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { unknownKeysProblem } from './known-keys.js';

export interface SeedMetro {
  readonly code: string;
  readonly name?: string;
  readonly country?: string;
  readonly id?: string;
}

export interface SeedPlan {
  readonly slug: string;
  /** Physical ports: 2 (one bond) or 4 (two bonds). */
  readonly ports: 2 | 4;
  readonly name?: string;
  readonly id?: string;
}

export interface SeedOperatingSystem {
  readonly slug: string;
  readonly name?: string;
  readonly distro?: string;
  readonly version?: string;
}

export interface SeedProject {
  readonly name: string;
  readonly id?: string;
}

export interface SeedToken {
  readonly token: string;
  /** Project names or ids this token may use; omitted = every project (a user API key). */
  readonly projects?: readonly string[];
}

export interface SeedConfig {
  readonly metros: readonly SeedMetro[];
  readonly plans: readonly SeedPlan[];
  /** The slugs createDevice accepts; any other is refused as Metal refuses it (422). */
  readonly operatingSystems?: readonly SeedOperatingSystem[];
  readonly projects: readonly SeedProject[];
  readonly tokens: readonly SeedToken[];
  readonly limits?: { readonly vrfsPerProject?: number };
}

/** What a simulator started without a seed file has: four metros, 2- and 4-port plans, one project and token. */
export const DEFAULT_SEED: SeedConfig = {
  metros: [
    { code: 'da', name: 'Dallas', country: 'US' },
    { code: 'sv', name: 'Silicon Valley', country: 'US' },
    { code: 'ny', name: 'New York', country: 'US' },
    { code: 'am', name: 'Amsterdam', country: 'NL' },
  ],
  plans: [
    { slug: 'c3.small.x86', ports: 2 },
    { slug: 'm3.small.x86', ports: 2 },
    { slug: 'c3.medium.x86', ports: 2 },
    { slug: 'm3.large.x86', ports: 2 },
    { slug: 'n3.xlarge.x86', ports: 4 },
    { slug: 'n2.xlarge.x86', ports: 4 },
  ],
  operatingSystems: [
    { slug: 'ubuntu_20_04', name: 'Ubuntu 20.04 LTS', distro: 'ubuntu', version: '20.04' },
    { slug: 'ubuntu_22_04', name: 'Ubuntu 22.04 LTS', distro: 'ubuntu', version: '22.04' },
    { slug: 'ubuntu_24_04', name: 'Ubuntu 24.04 LTS', distro: 'ubuntu', version: '24.04' },
    { slug: 'debian_11', name: 'Debian 11', distro: 'debian', version: '11' },
    { slug: 'debian_12', name: 'Debian 12', distro: 'debian', version: '12' },
    { slug: 'rocky_8', name: 'Rocky Linux 8', distro: 'rocky', version: '8' },
    { slug: 'rocky_9', name: 'Rocky Linux 9', distro: 'rocky', version: '9' },
    { slug: 'alma_8', name: 'AlmaLinux 8', distro: 'alma', version: '8' },
    { slug: 'alma_9', name: 'AlmaLinux 9', distro: 'alma', version: '9' },
    { slug: 'rhel_8', name: 'RHEL 8', distro: 'rhel', version: '8' },
    { slug: 'rhel_9', name: 'RHEL 9', distro: 'rhel', version: '9' },
    { slug: 'flatcar_stable', name: 'Flatcar Container Linux (Stable)', distro: 'flatcar', version: 'stable' },
    { slug: 'flatcar_beta', name: 'Flatcar Container Linux (Beta)', distro: 'flatcar', version: 'beta' },
    { slug: 'flatcar_alpha', name: 'Flatcar Container Linux (Alpha)', distro: 'flatcar', version: 'alpha' },
    { slug: 'flatcar_lts', name: 'Flatcar Container Linux (LTS)', distro: 'flatcar', version: 'lts' },
    { slug: 'vmware_esxi_7_0', name: 'VMware ESXi 7.0', distro: 'vmware', version: '7.0' },
    { slug: 'vmware_esxi_8_0', name: 'VMware ESXi 8.0', distro: 'vmware', version: '8.0' },
    { slug: 'windows_2022', name: 'Windows 2022 Standard', distro: 'windows', version: '2022' },
    { slug: 'custom_ipxe', name: 'Custom iPXE', distro: 'custom_ipxe', version: '' },
  ],
  projects: [{ name: 'default' }],
  tokens: [{ token: 'sim-token' }],
};

export class SeedError extends Error {
  override readonly name = 'SeedError';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function list(root: Record<string, unknown>, key: string): unknown[] {
  const v = root[key];
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new SeedError(`seed: ${key} must be a list`);
  return v;
}

/** An optional non-empty string field; `where` names the entry for the error (e.g. `plans[2]`). */
function optStr(obj: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') throw new SeedError(`seed: ${where}.${key} must be a non-empty string`);
  return v;
}

function reqStr(obj: Record<string, unknown>, key: string, where: string): string {
  const v = optStr(obj, key, where);
  if (v === undefined) throw new SeedError(`seed: ${where}.${key} is required`);
  return v;
}

/** Refuses a key the seed does not know (`project:` for `projects:` would grant every project). */
function knownKeysOnly(obj: Record<string, unknown>, known: readonly string[], where: string): void {
  const problem = unknownKeysProblem(obj, known, `seed: ${where}`);
  if (problem !== undefined) throw new SeedError(problem);
}

function entries(root: Record<string, unknown>, key: string, known: readonly string[]): Record<string, unknown>[] {
  return list(root, key).map((item, i) => {
    if (!isRecord(item)) throw new SeedError(`seed: ${key}[${i}] must be a mapping`);
    knownKeysOnly(item, known, `${key}[${i}]`);
    return item;
  });
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** Checks a parsed seed document; sections left out fall back to the default seed's. */
export function validateSeed(doc: unknown): SeedConfig {
  if (!isRecord(doc)) throw new SeedError('seed: the document must be a mapping');
  knownKeysOnly(doc, ['metros', 'plans', 'operatingSystems', 'projects', 'tokens', 'limits'], 'the document');
  const metros = entries(doc, 'metros', ['code', 'name', 'country', 'id']).map((m, i): SeedMetro => {
    const w = `metros[${i}]`;
    return {
      code: reqStr(m, 'code', w),
      ...optional('name', optStr(m, 'name', w)),
      ...optional('country', optStr(m, 'country', w)),
      ...optional('id', optStr(m, 'id', w)),
    };
  });
  const plans = entries(doc, 'plans', ['slug', 'ports', 'name', 'id']).map((p, i): SeedPlan => {
    const w = `plans[${i}]`;
    const ports = p['ports'] ?? 2;
    if (ports !== 2 && ports !== 4) throw new SeedError(`seed: ${w}.ports must be 2 or 4`);
    return {
      slug: reqStr(p, 'slug', w),
      ports,
      ...optional('name', optStr(p, 'name', w)),
      ...optional('id', optStr(p, 'id', w)),
    };
  });
  const operatingSystems = entries(doc, 'operatingSystems', ['slug', 'name', 'distro', 'version']).map((o, i): SeedOperatingSystem => {
    const w = `operatingSystems[${i}]`;
    return {
      slug: reqStr(o, 'slug', w),
      ...optional('name', optStr(o, 'name', w)),
      ...optional('distro', optStr(o, 'distro', w)),
      ...optional('version', optStr(o, 'version', w)),
    };
  });
  const projects = entries(doc, 'projects', ['name', 'id']).map((p, i): SeedProject => {
    const w = `projects[${i}]`;
    return { name: reqStr(p, 'name', w), ...optional('id', optStr(p, 'id', w)) };
  });
  const tokens = entries(doc, 'tokens', ['token', 'projects']).map((t, i): SeedToken => {
    const w = `tokens[${i}]`;
    const projectsField = t['projects'];
    if (projectsField !== undefined && (!Array.isArray(projectsField) || !projectsField.every((x) => typeof x === 'string'))) {
      throw new SeedError(`seed: ${w}.projects must be a list of project names or ids`);
    }
    return { token: reqStr(t, 'token', w), ...optional('projects', projectsField) };
  });
  const limitsField = doc['limits'];
  let limits: SeedConfig['limits'];
  if (limitsField !== undefined) {
    if (!isRecord(limitsField)) throw new SeedError('seed: limits must be a mapping');
    knownKeysOnly(limitsField, ['vrfsPerProject'], 'limits');
    const vrfs = limitsField['vrfsPerProject'];
    if (vrfs !== undefined && (typeof vrfs !== 'number' || !Number.isInteger(vrfs) || vrfs < 0)) {
      throw new SeedError('seed: limits.vrfsPerProject must be a non-negative integer');
    }
    limits = vrfs === undefined ? {} : { vrfsPerProject: vrfs };
  }
  return {
    metros: metros.length > 0 ? metros : DEFAULT_SEED.metros,
    plans: plans.length > 0 ? plans : DEFAULT_SEED.plans,
    operatingSystems: operatingSystems.length > 0 ? operatingSystems : (DEFAULT_SEED.operatingSystems ?? []),
    projects: projects.length > 0 ? projects : DEFAULT_SEED.projects,
    tokens: tokens.length > 0 ? tokens : DEFAULT_SEED.tokens,
    ...(limits === undefined ? {} : { limits }),
  };
}

export function parseSeed(text: string): SeedConfig {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err: unknown) {
    throw new SeedError(`seed: not valid YAML or JSON: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return validateSeed(doc);
}

export async function loadSeedFile(path: string): Promise<SeedConfig> {
  return parseSeed(await readFile(path, 'utf8'));
}
