#!/usr/bin/env node
// Trims a Debian root filesystem made by mmdebstrap (essential variant + libstdc++6 + ca-certificates
// + keepalived) down to what the image runs: `node` (the official Node.js build, which
// hack/build-image.js copies in after this; it links only glibc, libstdc++ and libgcc_s and carries
// its own OpenSSL and ICU), and keepalived, the control-plane endpoint announcer that Ignition
// (Flatcar) machines run from this image (docs/clusters-on-the-vlan.md) with what its scripts need:
// bash for the API server check (/dev/tcp), dash as /bin/sh with mkdir and mv for the notify script.
// So the dependency closures of libstdc++6, keepalived, bash and dash stay, the two coreutils
// programs, and the CA bundle that ca-certificates generated; nothing else. The other coreutils,
// dpkg, apt, perl, openssl, iproute2, documentation, locales and package-manager state go.
//
// What stays for scanners and licences: /etc/os-release, /var/lib/dpkg/status listing exactly the
// kept packages (with their file lists), and /usr/share/doc/<kept package>/copyright.
//
// Usage: node hack/image/trim-rootfs.js ROOTFS_DIR   (as root: it edits files owned by root)
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/** Packages whose whole dependency closure stays. */
const ROOTS = ['libstdc++6', 'ca-certificates', 'base-files', 'keepalived', 'bash', 'dash', 'coreutils'];
/**
 * Packages of which only some files stay, and whose dependencies are not followed: only the packages
 * those files link. The notify script's mkdir and mv, not the other hundred coreutils programs;
 * libperl.so, which net-snmp's agent library (linked by keepalived) links, not perl's modules.
 * @type {readonly { name: RegExp, keep: RegExp, needs: readonly string[] }[]}
 */
const PARTIAL = [
  { name: /^coreutils$/, keep: /^\/usr\/bin\/(mkdir|mv)$/, needs: ['libc6', 'libselinux1', 'libacl1', 'libattr1'] },
  { name: /^libperl5\.[0-9]+$/, keep: /^\/usr\/lib\/[^/]+\/libperl\.so\./, needs: ['libc6', 'libcrypt1'] },
];
/**
 * Dependencies the closure does not follow: ca-certificates' maintainer-script tooling (openssl;
 * debconf, perl), base-files' awk, keepalived's iproute2 (keepalived talks netlink itself; `ip` is
 * for its optional ip_rule/ip_route scripts, which the rendered configuration does not use), and
 * net-snmp's data: MIB files (keepalived's SNMP is off unless started with --snmp) and pci.ids
 * (libpci loads without it; keepalived lists no PCI devices), and libssl's legacy provider (MD4,
 * DES and the like, which keepalived's VRRP does not use).
 */
const NOT_FOLLOWED = new Set([
  'mawk',
  'awk',
  'debconf',
  'debconf-2.0',
  'perl-base',
  'perl',
  'openssl',
  'dpkg',
  'debianutils',
  'iproute2',
  'init-system-helpers',
  'libsnmp-base',
  'pci.ids',
  'openssl-provider-legacy',
]);
/** Paths removed even though a kept package ships them (tools and data node never uses). */
const DROP_PATHS = [
  '/usr/sbin/update-ca-certificates',
  '/etc/ca-certificates/update.d',
  '/usr/lib/x86_64-linux-gnu/gconv', // iconv modules: node and ICU do not use iconv
  '/usr/lib/aarch64-linux-gnu/gconv',
  '/usr/share/man',
  '/usr/share/info',
  '/usr/share/locale',
  '/usr/share/lintian',
  '/usr/share/bug',
  '/usr/share/bash-completion',
  '/usr/share/zsh',
  '/usr/share/menu',
  '/usr/share/gcc',
  '/usr/share/gdb',
  '/var/cache',
  '/var/log',
  '/var/lib/apt',
  '/var/lib/dpkg/alternatives',
  '/var/lib/dpkg/triggers',
  '/var/lib/dpkg/updates',
  '/var/lib/dpkg/available',
  '/var/lib/dpkg/status-old',
  '/var/lib/dpkg/diversions-old',
  '/var/lib/dpkg/statoverride-old',
  '/var/lib/dpkg/lock',
  '/var/lib/dpkg/lock-frontend',
  '/var/lib/dpkg/cmethopt',
  '/etc/apt',
  '/etc/dpkg',
  '/etc/alternatives',
  '/etc/ld.so.conf.d', // ld.so.cache stays; nothing runs ldconfig again
  '/etc/shadow-',
  '/etc/passwd-',
  '/etc/group-',
  '/etc/gshadow-',
  // Left by the removed packages' maintainer scripts (systemd units, PAM, login tooling).
  '/etc/systemd',
  '/var/lib/systemd',
  '/etc/pam.d',
  '/var/lib/pam',
  '/etc/security',
  '/etc/update-motd.d',
  '/var/lib/shells.state',
  '/etc/subuid',
  '/etc/subgid',
  '/root/.bashrc',
  '/root/.profile',
  // The build machine's, copied in by mmdebstrap; the container runtime provides its own.
  '/etc/resolv.conf',
  '/etc/hostname',
];
/** The merged-/usr links: listed by some packages, never to be removed. */
const PROTECTED = new Set(['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32', '/usr', '/etc', '/var', '/tmp', '/root', '/home']);

const NONROOT = { uid: 65532, name: 'nonroot', home: '/home/nonroot' };

/**
 * @typedef {{ name: string, text: string, fields: Map<string, string> }} Stanza
 */

/** @param {string} text @returns {Stanza[]} */
function parseStatus(text) {
  return text
    .split(/\n\n+/)
    .filter((s) => s.trim() !== '')
    .map((chunk) => {
      /** @type {Map<string, string>} */
      const fields = new Map();
      let last = '';
      for (const line of chunk.split('\n')) {
        if (/^\s/.test(line)) {
          fields.set(last, `${fields.get(last) ?? ''}\n${line}`);
        } else {
          const i = line.indexOf(':');
          last = line.slice(0, i);
          fields.set(last, line.slice(i + 1).trim());
        }
      }
      return { name: fields.get('Package') ?? '', text: chunk.trim(), fields };
    });
}

/** "a (>= 1) | b, c:any" -> [["a", "b"], ["c"]] */
function parseDepends(/** @type {string | undefined} */ value) {
  if (value === undefined || value.trim() === '') return [];
  return value.split(',').map((group) => group.split('|').map((alt) => (alt.trim().split(/[\s(]/)[0] ?? '').replace(/:.*$/, '')));
}

/** @param {string} root @param {string} pkg */
function fileList(root, pkg) {
  for (const name of [`${pkg}.list`, `${pkg}:amd64.list`, `${pkg}:arm64.list`]) {
    const path = join(root, 'var/lib/dpkg/info', name);
    if (existsSync(path))
      return readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '' && l !== '/.');
  }
  return [];
}

/** @param {string} name */
function partialOf(name) {
  return PARTIAL.find((p) => p.name.test(name));
}

/** The files of a kept package that stay: all of them, or a partial package's chosen files and their directories. */
function keptFiles(/** @type {string} */ root, /** @type {string} */ pkg) {
  const all = fileList(root, pkg);
  const partial = partialOf(pkg);
  if (partial === undefined) return all;
  const files = all.filter((p) => partial.keep.test(p));
  const dirsOf = (/** @type {string} */ p) =>
    p
      .split('/')
      .slice(1, -1)
      .map((_, i, parts) => `/${parts.slice(0, i + 1).join('/')}`);
  const wanted = new Set([...files, ...files.flatMap(dirsOf)]);
  return all.filter((p) => wanted.has(p));
}

/** Rewrites a partly kept package's .list (its kept paths) or .md5sums (the lines of its kept files). */
function writePartialList(/** @type {string} */ path, /** @type {string} */ ext, /** @type {string[]} */ kept) {
  if (ext === 'list') {
    writeFileSync(path, `/.\n${kept.join('\n')}\n`);
    return;
  }
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => kept.includes(`/${l.slice(l.indexOf('  ') + 2)}`));
  writeFileSync(path, `${lines.join('\n')}\n`);
}

/** @param {string} path */
function lexists(path) {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** @param {string} root */
function trim(root) {
  const statusPath = join(root, 'var/lib/dpkg/status');
  const stanzas = parseStatus(readFileSync(statusPath, 'utf8')).filter((s) => /installed$/.test(s.fields.get('Status') ?? ''));
  const byName = new Map(stanzas.map((s) => [s.name, s]));
  for (const s of stanzas) {
    for (const [provided] of parseDepends(s.fields.get('Provides'))) {
      if (provided !== undefined && !byName.has(provided)) byName.set(provided, s);
    }
  }

  /** @type {Set<string>} */
  const keep = new Set();
  const queue = [...ROOTS];
  while (queue.length > 0) {
    const name = queue.shift() ?? '';
    const stanza = byName.get(name);
    if (stanza === undefined || keep.has(stanza.name)) continue;
    keep.add(stanza.name);
    const partial = partialOf(stanza.name);
    if (partial !== undefined) {
      queue.push(...partial.needs);
      continue;
    }
    const deps = [...parseDepends(stanza.fields.get('Pre-Depends')), ...parseDepends(stanza.fields.get('Depends'))];
    for (const alternatives of deps) {
      if (alternatives.some((a) => NOT_FOLLOWED.has(a))) continue;
      const installed = alternatives.find((a) => byName.has(a));
      if (installed !== undefined) queue.push(installed);
    }
  }

  /** @type {Set<string>} */
  const keptPaths = new Set();
  for (const pkg of keep) for (const p of keptFiles(root, pkg)) keptPaths.add(p);

  const removed = stanzas.filter((s) => !keep.has(s.name));
  /** @type {string[]} */
  const dirs = [];
  const dropped = (/** @type {string} */ pkg) => fileList(root, pkg).filter((p) => !keep.has(pkg) || !keptPaths.has(p));
  const partlyKept = [...keep].filter((name) => partialOf(name) !== undefined);
  for (const name of [...removed.map((s) => s.name), ...partlyKept]) {
    for (const p of dropped(name)) {
      if (keptPaths.has(p) || PROTECTED.has(p)) continue;
      const abs = join(root, p);
      if (!lexists(abs)) continue;
      const st = lstatSync(abs);
      if (st.isDirectory()) dirs.push(p);
      else unlinkSync(abs);
    }
  }
  // Deepest first; a directory still holding something (kept files, generated files) stays.
  for (const d of dirs.sort((a, b) => b.length - a.length)) {
    try {
      rmdirSync(join(root, d));
    } catch {
      // not empty
    }
  }

  for (const p of DROP_PATHS) rmSync(join(root, p), { recursive: true, force: true });
  mkdirSync(join(root, 'var/cache'), { mode: 0o755 });
  mkdirSync(join(root, 'var/log'), { mode: 0o755 });

  // Documentation: only the copyright of what stays.
  const docDir = join(root, 'usr/share/doc');
  if (existsSync(docDir)) {
    for (const entry of readdirSync(docDir)) {
      const dir = join(docDir, entry);
      if (!keep.has(entry) || !lstatSync(dir).isDirectory()) {
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      for (const f of readdirSync(dir)) if (f !== 'copyright') rmSync(join(dir, f), { recursive: true, force: true });
    }
  }

  // dpkg state: the kept packages and their file lists, for scanners; no maintainer scripts.
  writeFileSync(
    statusPath,
    `${stanzas
      .filter((s) => keep.has(s.name))
      .map((s) => s.text)
      .join('\n\n')}\n`,
  );
  const infoDir = join(root, 'var/lib/dpkg/info');
  for (const f of readdirSync(infoDir)) {
    const pkg = f.replace(/\.[^.]+$/, '').replace(/:.*$/, '');
    const ext = f.slice(f.lastIndexOf('.') + 1);
    if (!keep.has(pkg) || !['list', 'md5sums'].includes(ext)) unlinkSync(join(infoDir, f));
    // A partly kept package lists what it still has, so that a scanner's file list is the truth.
    else if (partialOf(pkg) !== undefined) writePartialList(join(infoDir, f), ext, keptFiles(root, pkg));
  }

  removeDanglingLinks(root, ['usr/bin', 'usr/sbin', 'usr/lib', 'etc']);

  addNonrootUser(root);
  return { kept: [...keep].sort(), removed: removed.map((s) => s.name).sort() };
}

/** @param {string} root @param {string[]} dirs */
function removeDanglingLinks(root, dirs) {
  for (const d of dirs) {
    const abs = join(root, d);
    if (!existsSync(abs)) continue;
    for (const entry of readdirSync(abs)) {
      const p = join(abs, entry);
      const st = lstatSync(p);
      if (!st.isSymbolicLink()) continue;
      const target = readlinkInRoot(root, p);
      if (target === undefined) unlinkSync(p);
    }
  }
}

/** Resolves a symlink inside root (absolute targets are relative to root); undefined when dangling. */
function readlinkInRoot(/** @type {string} */ root, /** @type {string} */ link, depth = 0) {
  if (depth > 16) return undefined;
  let st;
  try {
    st = lstatSync(link);
  } catch {
    return undefined;
  }
  if (!st.isSymbolicLink()) return link;
  const target = readlinkSync(link);
  const next = target.startsWith('/') ? join(root, target) : join(link, '..', target);
  return readlinkInRoot(root, next, depth + 1);
}

/** @param {string} root */
function addNonrootUser(root) {
  const passwd = join(root, 'etc/passwd');
  const group = join(root, 'etc/group');
  const line = `${NONROOT.name}:x:${NONROOT.uid}:${NONROOT.uid}:${NONROOT.name}:${NONROOT.home}:/usr/sbin/nologin\n`;
  if (!readFileSync(passwd, 'utf8').includes(`:${NONROOT.uid}:`)) writeFileSync(passwd, readFileSync(passwd, 'utf8') + line);
  if (!readFileSync(group, 'utf8').includes(`:${NONROOT.uid}:`))
    writeFileSync(group, `${readFileSync(group, 'utf8')}${NONROOT.name}:x:${NONROOT.uid}:\n`);
  const home = join(root, NONROOT.home.slice(1));
  mkdirSync(home, { recursive: true });
  chownSync(home, NONROOT.uid, NONROOT.uid);
  chmodSync(home, 0o700);
}

const root = process.argv[2];
if (root === undefined || !statSync(root).isDirectory()) {
  process.stderr.write('usage: trim-rootfs.js ROOTFS_DIR\n');
  process.exit(2);
}
const { kept, removed } = trim(root);
process.stdout.write(`trim-rootfs: kept ${kept.length} packages (${kept.join(' ')}); removed ${removed.length}\n`);
