// The injected cloud-config part: our files (base64) and our runcmd lines (the network step, then a
// control plane's endpoint announcer), with merge_how so that cloud-init prepends our lists to the
// bootstrap config's instead of replacing them (its default).
import { BOOT_COMMAND, BOOT_CONFIG_PATH, BOOT_FILES_DIR, BOOT_SCRIPT, BOOT_SCRIPT_PATH } from './boot-script.js';
import type { RenderedAnnouncer } from './endpoint-announcer.js';
import type { BootPort, RenderedFile, RenderedNetwork, RendererName } from './types.js';

/** What the boot script reads from /opt/metal-l2/netcfg.json: the rendered network, files by reference. */
export interface BootConfig {
  version: 1;
  renderer: RendererName;
  metadataUrl: string;
  ports: BootPort[];
  interfaces: string[];
  files: { source: string; path: string; mode: string }[];
}

export const MERGE_HOW = 'list(prepend)+dict(no_replace,recurse_list)+str()';

/** Where each rendered file's text (with placeholders) is shipped; the boot script writes the real path. */
export function shippedFilePath(index: number, path: string): string {
  const base = (path.split('/').pop() ?? 'file').replace(/[^A-Za-z0-9._-]/g, '_');
  return `${BOOT_FILES_DIR}/${String(index + 1).padStart(2, '0')}-${base}`;
}

/** Every file the boot script writes: the network's, then the announcer's (same placeholders). */
function bootFiles(network: RenderedNetwork, announcer: RenderedAnnouncer | undefined): RenderedFile[] {
  return [...network.files, ...(announcer?.files ?? [])];
}

export function toBootConfig(network: RenderedNetwork, announcer?: RenderedAnnouncer): BootConfig {
  return {
    version: network.version,
    renderer: network.renderer,
    metadataUrl: network.metadataUrl,
    ports: network.ports,
    interfaces: network.interfaces,
    files: bootFiles(network, announcer).map((f, i) => ({ source: shippedFilePath(i, f.path), path: f.path, mode: f.mode })),
  };
}

/** The files the boot script needs, in order: the rendered files (shipped), its config, itself. Ignition machines get the same. */
export function cloudConfigFiles(
  network: RenderedNetwork,
  announcer: RenderedAnnouncer | undefined,
): { path: string; permissions: string; content: string }[] {
  return [
    ...bootFiles(network, announcer).map((f, i) => ({ path: shippedFilePath(i, f.path), permissions: '0644', content: f.content })),
    { path: BOOT_CONFIG_PATH, permissions: '0600', content: JSON.stringify(toBootConfig(network, announcer), null, 2) + '\n' },
    { path: BOOT_SCRIPT_PATH, permissions: '0755', content: BOOT_SCRIPT },
  ];
}

/** A YAML single-quoted scalar: only `'` needs escaping (doubled). */
function yamlQuoted(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * The text of the injected `text/cloud-config` part (without an announcer: byte for byte what it was
 * before announcers existed, so workers' hashes do not move). Deterministic: its sha256 is the injection hash
 * the controller records. Everything variable is base64, so the clear text is fixed and template-safe.
 */
export function renderCloudConfigPart(network: RenderedNetwork, announcer?: RenderedAnnouncer): string {
  const writeFiles = cloudConfigFiles(network, announcer);
  const lines = [
    '#cloud-config',
    "# metal-l2: this machine's Layer 2 network, added to its bootstrap data (see the X-Metal-L2 header)",
    'merge_how:',
    '- name: list',
    '  settings: [prepend]',
    '- name: dict',
    '  settings: [no_replace, recurse_list]',
    '- name: str',
    '  settings: []',
    'write_files:',
  ];
  for (const f of writeFiles) {
    lines.push(
      `- path: ${f.path}`,
      '  owner: root:root',
      `  permissions: '${f.permissions}'`,
      '  encoding: b64',
      `  content: ${Buffer.from(f.content, 'utf8').toString('base64')}`,
    );
  }
  lines.push('runcmd:', ...[BOOT_COMMAND, ...(announcer?.commands ?? [])].map((c) => `- ${yamlQuoted(c)}`));
  return lines.join('\n') + '\n';
}
