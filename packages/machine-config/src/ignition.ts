// Injection into Ignition bootstrap data (`format: ignition`: Flatcar). CABPK emits spec 2.3 JSON;
// Flatcar also reads 3.x. The config is edited in place, never wrapped: CAPP runs Go templating over
// the whole value before it creates the device, and a wrapped (data-URL) original would hide its
// placeholders. We only append: storage.files for the same files the cloud-config part writes (the
// rendered network files and the announcer's, shipped with port placeholders; netcfg.json; the boot
// script), one script running the boot script as the cloud-config part's runcmd does, a oneshot unit
// that runs it before CABPK's kubeadm.service, a control plane's announcer unit (keepalived from the
// metal-l2 image: Flatcar has no package manager to install it, announcer-unit.ts), and a marker
// file. The boot script resolves Metal port names by MAC and writes the real networkd units and
// keepalived's files, exactly as on cloud-init machines.
import { ENDPOINT_UNIT, renderEndpointUnit } from './announcer-unit.js';
import { BOOT_COMMAND, BOOT_DIR } from './boot-script.js';
import { cloudConfigFiles } from './cloud-config.js';
import type { RenderedAnnouncer } from './endpoint-announcer.js';
import { formatMarker, MARKER_HEADER, MARKER_VERSION, sha256Hex } from './envelope.js';
import type { InjectionMarker } from './envelope.js';
import type { RenderedNetwork } from './types.js';

/** The spec versions served, by family: Ignition's stable specs that have `storage.files` and `systemd.units` as written here. */
export const IGNITION_SPEC_VERSIONS = {
  '2': ['2.0.0', '2.1.0', '2.2.0', '2.3.0', '2.4.0'],
  '3': ['3.0.0', '3.1.0', '3.2.0', '3.3.0', '3.4.0', '3.5.0'],
} as const;

/** The unit that runs our step; CABPK's unit runs kubeadm. */
export const IGNITION_UNIT = 'metal-l2.service';
export const KUBEADM_UNIT = 'kubeadm.service';
/** The commands of the cloud-config part's runcmd, as one script the unit runs. */
export const IGNITION_STEP_PATH = `${BOOT_DIR}/first-boot`;
/** Written when the step succeeded: the unit runs once per machine, as cloud-init's runcmd does. */
export const IGNITION_DONE_PATH = '/var/lib/metal-l2/first-boot.done';
/** The marker: the same line as the MIME envelope's header, in a file of its own (an unknown JSON key would fail validation). */
export const IGNITION_MARKER_PATH = `${BOOT_DIR}/injected`;

export type IgnitionFamily = '2' | '3';

/** An Ignition document as JSON: objects whose keys keep their order. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type ParsedIgnition =
  | { kind: 'config'; family: IgnitionFamily; version: string; config: JsonObject }
  /** Not a config we can edit; `message` says why (no secrets: nothing of the value is quoted but its version). */
  | { kind: 'unsupported'; reason: 'version' | 'content'; message: string };

const served = (family: IgnitionFamily): string => IGNITION_SPEC_VERSIONS[family].join(', ');
const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads the document and its `ignition.version`; refuses spec 1 (`ignitionVersion`), experimental and unknown versions. */
export function parseIgnition(value: string): ParsedIgnition {
  let config: Json;
  try {
    config = JSON.parse(value) as Json;
  } catch {
    return { kind: 'unsupported', reason: 'content', message: 'bootstrap data of format ignition is not JSON' };
  }
  if (!isObject(config))
    return { kind: 'unsupported', reason: 'content', message: 'bootstrap data of format ignition is not a JSON object' };
  if ('ignitionVersion' in config) {
    return {
      kind: 'unsupported',
      reason: 'version',
      message: `Ignition spec 1 (ignitionVersion) is not supported: only spec ${served('2')} and ${served('3')}`,
    };
  }
  const ignition = config['ignition'];
  const version = isObject(ignition) ? ignition['version'] : undefined;
  if (typeof version !== 'string') {
    return { kind: 'unsupported', reason: 'content', message: 'bootstrap data of format ignition has no ignition.version' };
  }
  const family = version.split('.')[0];
  if ((family === '2' || family === '3') && (IGNITION_SPEC_VERSIONS[family] as readonly string[]).includes(version)) {
    return { kind: 'config', family, version, config };
  }
  const shown = JSON.stringify(version.slice(0, 40));
  return {
    kind: 'unsupported',
    reason: 'version',
    message: `Ignition spec version ${shown} is not supported (experimental and unknown versions are refused): only ${served('2')} and ${served('3')}`,
  };
}

/** One file we append, before it is shaped for a spec family. */
interface IgnitionFile {
  path: string;
  mode: number;
  content: string;
}

/** Every file we add, in order: the cloud-config part's files, the step script, then the marker (last). */
function ourFiles(network: RenderedNetwork, announcer: RenderedAnnouncer | undefined): IgnitionFile[] {
  return [
    ...cloudConfigFiles(network, announcer).map((f) => ({ path: f.path, mode: parseInt(f.permissions, 8), content: f.content })),
    { path: IGNITION_STEP_PATH, mode: 0o755, content: renderStepScript(announcer !== undefined) },
  ];
}

/**
 * The boot command of the cloud-config part's runcmd, then the once-only stamp. Not the announcer's
 * commands (they install keepalived with apt-get): on Ignition machines ENDPOINT_UNIT runs it.
 */
function renderStepScript(announces: boolean): string {
  const done = IGNITION_DONE_PATH;
  const what = announces ? `, with the endpoint announcer's files (${ENDPOINT_UNIT} runs keepalived)` : '';
  return [
    '#!/bin/sh',
    `# metal-l2: run once by ${IGNITION_UNIT} before ${KUBEADM_UNIT}: this machine's Layer 2 network${what}.`,
    "# The boot command of cloud-config machines' runcmd.",
    BOOT_COMMAND,
    `mkdir -p ${done.slice(0, done.lastIndexOf('/'))} && touch ${done}`,
    '',
  ].join('\n');
}

/**
 * Fail closed, as the cloud-config part does: kubeadm.service requires this unit (enabling it makes
 * the `requires` link), so a failed step keeps kubeadm from running. After the network is online: the
 * boot script reads the metadata service over bond0.
 */
export const IGNITION_UNIT_CONTENTS = [
  '[Unit]',
  "Description=metal-l2: this machine's Layer 2 network (and control-plane endpoint) before kubeadm",
  'Wants=network-online.target',
  'After=network-online.target',
  `Before=${KUBEADM_UNIT}`,
  `ConditionPathExists=!${IGNITION_DONE_PATH}`,
  '',
  '[Service]',
  'Type=oneshot',
  'RemainAfterExit=yes',
  `ExecStart=/bin/sh ${IGNITION_STEP_PATH}`,
  '',
  '[Install]',
  'WantedBy=multi-user.target',
  `RequiredBy=${KUBEADM_UNIT}`,
  '',
].join('\n');

const dataUrl = (text: string): string => `data:;base64,${Buffer.from(text, 'utf8').toString('base64')}`;

function fileEntry(family: IgnitionFamily, f: IgnitionFile): JsonObject {
  const contents = { source: dataUrl(f.content) };
  // Spec 2 names the filesystem; spec 3 has paths only.
  return family === '2' ? { filesystem: 'root', path: f.path, contents, mode: f.mode } : { path: f.path, contents, mode: f.mode };
}

/** The containers (dotted paths) we created because the original had none; recorded in the marker to take them away again. */
type Created = ('storage' | 'storage.files' | 'systemd' | 'systemd.units')[];

function markerText(marker: InjectionMarker, created: Created): string {
  return `${formatMarker(marker)}\ncreated: ${created.join(' ')}\n`;
}

/** What we add to an Ignition config: a control plane's announcer comes with the image its unit runs keepalived from. */
export interface IgnitionAdditions {
  network: RenderedNetwork;
  announcer: { rendered: RenderedAnnouncer; image: string } | undefined;
  injectHash: string;
  origHash: string;
}

/** Appends our entries to a copy of `config` (CABPK's entries stay first and unchanged); `added` is ours alone. */
export function appendOurs(
  config: JsonObject,
  spec: { family: IgnitionFamily; version: string },
  input: IgnitionAdditions,
): { config: JsonObject; added: JsonObject[] } {
  const { version } = spec;
  const out = structuredClone(config);
  const created: Created = [];
  const files = listAt(out, { key: 'storage', list: 'files' }, created);
  const units = listAt(out, { key: 'systemd', list: 'units' }, created);
  const marker = { version: MARKER_VERSION, injectHash: input.injectHash, origHash: input.origHash };
  const ourFileEntries = [
    ...ourFiles(input.network, input.announcer?.rendered),
    { path: IGNITION_MARKER_PATH, mode: 0o644, content: markerText(marker, created) },
  ].map((f) => fileEntry(spec.family, f));
  // Spec 2.0 enables a unit with `enable`; `enabled` came with 2.1 (and is what 3.x has).
  const enable = version === '2.0.0' ? { enable: true } : { enabled: true };
  const ourUnits: JsonObject[] = [{ name: IGNITION_UNIT, ...enable, contents: IGNITION_UNIT_CONTENTS }];
  if (input.announcer !== undefined) {
    const contents = renderEndpointUnit(input.announcer.image, { after: IGNITION_UNIT, before: KUBEADM_UNIT });
    ourUnits.push({ name: ENDPOINT_UNIT, ...enable, contents });
  }
  files.push(...ourFileEntries);
  units.push(...ourUnits);
  return { config: out, added: [...ourFileEntries, ...ourUnits] };
}

/** Where our entries go: `storage.files` and `systemd.units`. */
type ListAt = { key: 'storage'; list: 'files' } | { key: 'systemd'; list: 'units' };

/** The list at `at` in `config`, made (and recorded in `created`) when the original has none. */
function listAt(config: JsonObject, at: ListAt, created: Created): Json[] {
  let container = config[at.key];
  if (!isObject(container)) {
    container = {};
    config[at.key] = container;
    created.push(at.key);
  }
  const found = container[at.list];
  if (Array.isArray(found)) return found;
  const made: Json[] = [];
  container[at.list] = made;
  created.push(`${at.key}.${at.list}` as Created[number]);
  return made;
}

/** The compact JSON the hashes are taken over: the same document always gives the same text. */
export const ignitionText = (config: JsonObject): string => JSON.stringify(config);

export type OursInIgnition =
  { kind: 'plain' } | { kind: 'injected'; marker: InjectionMarker; original: JsonObject } | { kind: 'malformed'; message: string };

const MARKER_LINE = /^[^:]+:\s*(v[0-9]+);\s*inject=sha256:([0-9a-f]{64});\s*orig=sha256:([0-9a-f]{64})\s*$/;

/** Finds our marker file and takes our entries (every path under /opt/metal-l2, our units) back out. */
export function findOurs(config: JsonObject): OursInIgnition {
  const storage = config['storage'];
  const files = isObject(storage) && Array.isArray(storage['files']) ? storage['files'] : [];
  const markerEntry = files.find((f) => isObject(f) && f['path'] === IGNITION_MARKER_PATH);
  if (markerEntry === undefined) return { kind: 'plain' };
  const text = isObject(markerEntry) ? decodeDataUrl(markerEntry['contents']) : undefined;
  const [line = '', createdLine = ''] = (text ?? '').split('\n');
  const m = MARKER_LINE.exec(line);
  if (m === null || !createdLine.startsWith('created:'))
    return { kind: 'malformed', message: `the ${MARKER_HEADER} marker file cannot be read` };
  const [, version = '', injectHash = '', origHash = ''] = m;
  if (version !== MARKER_VERSION) return { kind: 'malformed', message: `unknown ${MARKER_HEADER} version ${version}` };
  const created = createdLine
    .slice('created:'.length)
    .trim()
    .split(' ')
    .filter((c) => c !== '');
  const original = structuredClone(config);
  const ourPath = (f: Json): boolean => isObject(f) && typeof f['path'] === 'string' && f['path'].startsWith(`${BOOT_DIR}/`);
  const ourUnit = (u: Json): boolean => isObject(u) && (u['name'] === IGNITION_UNIT || u['name'] === ENDPOINT_UNIT);
  strip(original, { key: 'storage', list: 'files', ours: ourPath }, created);
  strip(original, { key: 'systemd', list: 'units', ours: ourUnit }, created);
  return { kind: 'injected', marker: { version, injectHash, origHash }, original };
}

/** Takes our entries out of the list at `at`, and the containers we created. */
function strip(config: JsonObject, at: ListAt & { ours: (e: Json) => boolean }, created: string[]): void {
  const { key, list, ours } = at;
  const container = config[key];
  if (!isObject(container)) return;
  const entries = container[list];
  if (Array.isArray(entries)) container[list] = entries.filter((e) => !ours(e));
  if (created.includes(`${key}.${list}`)) delete container[list];
  if (created.includes(key)) delete config[key];
}

function decodeDataUrl(contents: Json | undefined): string | undefined {
  const source = isObject(contents) ? contents['source'] : undefined;
  if (typeof source !== 'string' || !source.startsWith('data:;base64,')) return undefined;
  return Buffer.from(source.slice('data:;base64,'.length), 'base64').toString('utf8');
}

/** The hash of the original as recorded in the marker: over its compact JSON text. */
export const ignitionOrigHash = (original: JsonObject): string => sha256Hex(ignitionText(original));
