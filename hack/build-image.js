#!/usr/bin/env node
// Builds the metal-l2 container image on this machine: no Docker engine, no registry.
//
//   base layer  Debian 13 (trixie) from the machine's Debian mirror via mmdebstrap (libstdc++6,
//               ca-certificates and keepalived), trimmed by hack/image/trim-rootfs.js to what node
//               links and reads (glibc, libstdc++, libgcc_s and the CA bundle) and what keepalived, the
//               control-plane endpoint announcer Ignition machines run from this image, links and runs
//               (its libraries; bash, dash, mkdir and mv for its check and notify scripts); no other
//               coreutils, no package manager. Then /usr/bin/node: the same official Node.js 24 binary that development and
//               CI run (hack/install-node.js, pinned in hack/nodejs/package-lock.json), byte for byte,
//               with its licence in /usr/share/doc/nodejs/. Debian 13's nodejs is 20, past its end of
//               life. Cached by its recipe under ~/.cache/metal-l2/image/base-<recipe hash>/ as a
//               one-layer OCI layout.
//   app layer   /app: a production install of the two controllers' workspaces (npm ci --omit=dev,
//               cached by the lockfile and package.json files) plus their built dist/ JavaScript.
//
// Output in .local/image/: oci/ (an OCI image layout, tag = the version), metal-l2-<version>.oci.tar
// (an oci-archive for `skopeo copy` / `podman load`) and image.json (reference, digest, sizes).
//
// Usage: node hack/build-image.js [--out DIR] [--no-archive]    (npm run image builds first)
// Needs root (mmdebstrap writes a root-owned tree) and the Debian packages mmdebstrap, umoci, skopeo.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installNode, pinnedNode } from './install-node.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const started = Date.now();

/** The workspaces the image runs; their production dependencies come along. */
const CONTROLLERS = ['@metal-l2/ipam-controller', '@metal-l2/network-controller'];
const NONROOT = '65532:65532';

/** @param {string} msg */
function log(msg) {
  process.stderr.write(`[image ${((Date.now() - started) / 1000).toFixed(1).padStart(5)}s] ${msg}\n`);
}

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ cwd?: string, quiet?: boolean, env?: NodeJS.ProcessEnv }} [opts]
 */
function run(cmd, args, opts = {}) {
  const res = spawnSync(cmd, args, {
    cwd: opts.cwd ?? repoRoot,
    env: opts.env ?? process.env,
    stdio: opts.quiet === true ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.error !== undefined) throw new Error(`${cmd}: ${res.error.message}`);
  if (res.status !== 0) {
    const out = opts.quiet === true ? `\n${res.stdout}${res.stderr}` : '';
    throw new Error(`${cmd} ${args.join(' ')} exited with ${res.status ?? res.signal}${out}`);
  }
  return res.stdout ?? '';
}

/** @param {...(string | Buffer)} parts */
function sha256(...parts) {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex');
}

function parseArgs(/** @type {string[]} */ argv) {
  const opts = { out: join(repoRoot, '.local', 'image'), archive: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out') opts.out = argv[++i] ?? '';
    else if (a === '--no-archive') opts.archive = false;
    else if (a === '--help' || a === '-h') {
      process.stdout.write('usage: node hack/build-image.js [--out DIR] [--no-archive]\n');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return opts;
}

/**
 * The machine's Debian mirror: the first deb822 or one-line source for a Debian suite that is not
 * the security archive. METAL_L2_IMAGE_MIRROR overrides it.
 */
function debianMirror() {
  const override = process.env['METAL_L2_IMAGE_MIRROR'];
  if (override !== undefined && override !== '') return override;
  const files = ['/etc/apt/sources.list', ...listDir('/etc/apt/sources.list.d').map((f) => join('/etc/apt/sources.list.d', f))];
  for (const file of files) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^URIs:\s*(\S+)[\s\S]*?^Suites:\s*([^\n]+)/gm)) {
      const [, uri = '', suites = ''] = m;
      if (/\b(bookworm|trixie|bullseye|stable)\b/.test(suites) && !/security/.test(uri + suites)) return uri;
    }
    for (const m of text.matchAll(/^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/gm)) {
      const [, uri = '', suite = ''] = m;
      if (/^(bookworm|trixie|bullseye|stable)(-updates)?$/.test(suite) && !/security/.test(uri)) return uri;
    }
  }
  throw new Error('no Debian mirror found in /etc/apt/sources.list*; set METAL_L2_IMAGE_MIRROR');
}

/** @param {string} dir */
function listDir(dir) {
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

function trixieKeyring() {
  for (const k of ['/usr/share/keyrings/debian-archive-trixie-stable.gpg', '/usr/share/keyrings/debian-archive-keyring.gpg']) {
    if (existsSync(k)) return k;
  }
  throw new Error('no Debian archive keyring with the trixie key: install debian-archive-keyring');
}

function requireTools(/** @type {string[]} */ tools) {
  const missing = tools.filter((t) => spawnSync('sh', ['-c', `command -v ${t}`], { stdio: 'ignore' }).status !== 0);
  if (missing.length > 0) throw new Error(`missing tools: ${missing.join(', ')} (apt-get install mmdebstrap umoci skopeo)`);
}

/** Deterministic tar of DIR's contents (sorted, root-owned unless owned otherwise, clamped mtimes). */
function tarDir(/** @type {string} */ dir, /** @type {string} */ out, /** @type {{ epoch: number, forceRoot: boolean }} */ o) {
  const entries = listDir(dir);
  run('tar', [
    '--create',
    `--file=${out}`,
    `--directory=${dir}`,
    '--sort=name',
    '--format=pax',
    '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
    `--mtime=@${o.epoch}`,
    '--clamp-mtime',
    '--numeric-owner',
    ...(o.forceRoot ? ['--owner=0', '--group=0', '--mode=go-w,a+rX'] : []),
    '--',
    ...entries,
  ]);
}

/** @param {string} cacheRoot @param {number} epoch */
function baseLayout(cacheRoot, epoch) {
  const pin = pinnedNode();
  const mirror = debianMirror();
  const keyring = trixieKeyring();
  const trimScript = join(repoRoot, 'hack/image/trim-rootfs.js');
  const recipe = {
    suite: 'trixie',
    variant: 'essential',
    include: ['libstdc++6', 'ca-certificates', 'keepalived'],
    dpkgopt: [
      'path-exclude=/usr/share/man/*',
      'path-exclude=/usr/share/locale/*',
      'path-exclude=/usr/share/doc/*',
      'path-include=/usr/share/doc/*/copyright',
    ],
    mirror,
    keyring: sha256(readFileSync(keyring)),
    arch: execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim(),
    trim: sha256(readFileSync(trimScript)),
    node: pin,
    epoch,
    format: 4,
  };
  const key = sha256(JSON.stringify(recipe)).slice(0, 16);
  const dir = join(cacheRoot, `base-${key}`);
  if (existsSync(join(dir, 'done'))) {
    log(`base: cached ${relative(homedir(), dir)} (${JSON.parse(readFileSync(join(dir, 'base.json'), 'utf8')).node})`);
    return dir;
  }
  const runtime = installNode();
  log(`base: mmdebstrap trixie from ${mirror} (recipe ${key}; cold, about 2 minutes)`);
  const work = `${dir}.tmp-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const rootfs = join(work, 'rootfs');
  // Downloaded .debs survive recipe changes (a changed trim script re-runs only the install).
  const debs = join(cacheRoot, 'debs');
  mkdirSync(debs, { recursive: true });
  run(
    'mmdebstrap',
    [
      '--quiet',
      '--mode=root',
      '--format=directory',
      `--variant=${recipe.variant}`,
      `--include=${recipe.include.join(',')}`,
      ...recipe.dpkgopt.map((o) => `--dpkgopt=${o}`),
      '--skip=download/empty',
      `--setup-hook=mkdir -p "$1/var/cache/apt/archives" && find "${debs}" -maxdepth 1 -name '*.deb' -exec cp -t "$1/var/cache/apt/archives/" {} +`,
      `--customize-hook=find "$1/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -exec cp -n -t "${debs}/" {} +`,
      recipe.suite,
      rootfs,
      `deb [signed-by=${keyring}] ${mirror} ${recipe.suite} main`,
    ],
    { env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) } },
  );
  log('base: trimming');
  const trimOut = run(process.execPath, [trimScript, rootfs], { quiet: true });
  rmSync(join(rootfs, 'dev'), { recursive: true, force: true });
  mkdirSync(join(rootfs, 'dev'), { mode: 0o755 });
  // After the trim, which keeps only what Debian's package lists own: node is none of theirs.
  cpSync(runtime.node, join(rootfs, 'usr/bin/node'));
  chmodSync(join(rootfs, 'usr/bin/node'), 0o755);
  mkdirSync(join(rootfs, 'usr/share/doc/nodejs'), { recursive: true });
  cpSync(runtime.license, join(rootfs, 'usr/share/doc/nodejs/LICENSE'));
  // Runs only if the trimmed closure has every library node links.
  const node = run('chroot', [rootfs, '/usr/bin/node', '--version'], { quiet: true }).trim();
  if (node !== `v${runtime.version}`) throw new Error(`the base's node is ${node}, not the pinned v${runtime.version}`);
  // keepalived runs only if the closure has every library it links; its scripts need these.
  run('chroot', [rootfs, '/usr/sbin/keepalived', '--version'], { quiet: true });
  for (const tool of ['usr/bin/bash', 'usr/bin/sh', 'usr/bin/mkdir', 'usr/bin/mv']) {
    if (!existsSync(join(rootfs, tool))) throw new Error(`trimmed base lacks /${tool}, which the announcer's scripts need`);
  }
  for (const tool of ['usr/bin/dpkg', 'usr/bin/apt', 'usr/bin/ls', 'usr/bin/cat', 'usr/sbin/ip', 'usr/bin/ip']) {
    if (existsSync(join(rootfs, tool))) throw new Error(`trimmed base still has /${tool}`);
  }
  const rootfsBytes = Number(run('du', ['-sb', rootfs], { quiet: true }).split('\t')[0]);
  log(`base: ${node} and keepalived, ${(rootfsBytes / 1e6).toFixed(1)} MB; packing`);
  tarDir(rootfs, join(work, 'base.tar'), { epoch, forceRoot: false });
  const oci = join(work, 'oci');
  run('umoci', ['init', '--layout', oci], { quiet: true });
  run('umoci', ['new', '--image', `${oci}:base`], { quiet: true });
  const created = new Date(epoch * 1000).toISOString();
  run(
    'umoci',
    [
      'raw',
      'add-layer',
      '--image',
      `${oci}:base`,
      '--history.created',
      created,
      '--history.created_by',
      `mmdebstrap --variant=essential --include=${recipe.include.join(',')} trixie; hack/image/trim-rootfs.js; /usr/bin/node: ${runtime.name}@${runtime.version} (${runtime.integrity})`,
      join(work, 'base.tar'),
    ],
    { quiet: true },
  );
  rmSync(join(work, 'base.tar'));
  rmSync(rootfs, { recursive: true, force: true });
  writeFileSync(join(work, 'base.json'), `${JSON.stringify({ recipe, node, rootfsBytes, trim: trimOut.trim() }, null, 2)}\n`);
  writeFileSync(join(work, 'done'), '');
  rmSync(dir, { recursive: true, force: true });
  renameSync(work, dir);
  return dir;
}

/** Drops cached bases and module trees of other recipes (the downloaded .debs stay). */
function pruneCache(/** @type {string} */ cacheRoot, /** @type {string[]} */ current) {
  for (const entry of listDir(cacheRoot)) {
    const p = join(cacheRoot, entry);
    if (/^(base|modules)-/.test(entry) && !current.includes(p)) {
      log(`cache: removing ${entry}`);
      rmSync(p, { recursive: true, force: true });
    }
  }
}

/** Files npm reads for a production install of the workspace. */
function installInputs() {
  const files = ['package.json', 'package-lock.json', ...listDir(join(repoRoot, 'packages')).map((p) => `packages/${p}/package.json`)];
  return files.filter((f) => existsSync(join(repoRoot, f)));
}

/** Runtime-irrelevant files dropped from node_modules: type declarations, source maps, docs. */
function pruneModules(/** @type {string} */ dir) {
  const walk = (/** @type {string} */ d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        if (d === join(dir, '@types') || (entry.name === '@types' && d === dir)) rmSync(p, { recursive: true });
        else walk(p);
      } else if (/\.(d\.[cm]?ts|map|md|markdown)$/i.test(entry.name) && !/^licen[cs]e/i.test(entry.name)) {
        rmSync(p);
      }
    }
  };
  walk(dir);
}

/** node_modules for the controllers, from `npm ci --omit=dev`, cached by its inputs. */
function productionModules(/** @type {string} */ cacheRoot) {
  const inputs = installInputs();
  const npmVersion = run('npm', ['--version'], { quiet: true }).trim();
  const key = sha256(
    npmVersion,
    process.version.split('.')[0] ?? '',
    ...CONTROLLERS,
    ...inputs.flatMap((f) => [f, readFileSync(join(repoRoot, f))]),
  ).slice(0, 16);
  const dir = join(cacheRoot, `modules-${key}`);
  if (existsSync(join(dir, 'done'))) {
    log(`modules: cached ${relative(homedir(), dir)}`);
    return dir;
  }
  log(`modules: npm ci --omit=dev for ${CONTROLLERS.join(', ')} (key ${key})`);
  const work = `${dir}.tmp-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  for (const f of inputs) cpSync(join(repoRoot, f), join(work, f));
  run(
    'npm',
    [
      'ci',
      '--omit=dev',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      ...CONTROLLERS.map((w) => `--workspace=${w}`),
    ],
    { cwd: work, quiet: true },
  );
  rmSync(join(work, 'node_modules', '.package-lock.json'), { force: true });
  pruneModules(join(work, 'node_modules'));
  writeFileSync(join(work, 'done'), '');
  rmSync(dir, { recursive: true, force: true });
  renameSync(work, dir);
  return dir;
}

/** /app: package.json files, node_modules, and each linked workspace's dist/ JavaScript and bin/. */
function stageApp(/** @type {string} */ modulesDir, /** @type {string} */ stage) {
  const app = join(stage, 'app');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  cpSync(join(repoRoot, 'package.json'), join(app, 'package.json'));
  // Hard links when the cache and the output share a filesystem (nothing writes to the staged files).
  const hardLinked = spawnSync('cp', ['-al', join(modulesDir, 'node_modules'), join(app, 'node_modules')], { stdio: 'ignore' });
  if (hardLinked.status !== 0) {
    rmSync(join(app, 'node_modules'), { recursive: true, force: true });
    cpSync(join(modulesDir, 'node_modules'), join(app, 'node_modules'), { recursive: true, verbatimSymlinks: true });
  }
  const linked = listDir(join(app, 'node_modules', '@metal-l2'));
  for (const name of linked) {
    const pkg = join(repoRoot, 'packages', name);
    const dist = join(pkg, 'dist');
    if (!existsSync(join(dist, 'index.js')) && !existsSync(join(dist, 'main.js'))) {
      throw new Error(`packages/${name}/dist is missing: run npm run build first (npm run image does)`);
    }
    const target = join(app, 'packages', name);
    cpSync(join(pkg, 'package.json'), join(target, 'package.json'));
    cpSync(dist, join(target, 'dist'), {
      recursive: true,
      filter: (src) => lstatSync(src).isDirectory() || (/\.js$/.test(src) && !/\.test\.js$/.test(src)),
    });
    if (existsSync(join(pkg, 'bin'))) cpSync(join(pkg, 'bin'), join(target, 'bin'), { recursive: true });
  }
  return linked;
}

function gitRevision() {
  const res = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' });
  return res.status === 0 ? res.stdout.trim() : 'unknown';
}

function sourceDateEpoch() {
  const env = process.env['SOURCE_DATE_EPOCH'];
  if (env !== undefined && /^\d+$/.test(env)) return Number(env);
  // A fixed instant: the base's recipe and the app's content decide the digest, not the clock.
  return 1735689600; // 2025-01-01T00:00:00Z
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (process.getuid?.() !== 0) throw new Error('building the image needs root (mmdebstrap --mode=root, root-owned layers)');
  requireTools(['mmdebstrap', 'umoci', 'tar', 'chroot', ...(opts.archive ? ['skopeo'] : [])]);
  const version = /** @type {{ version: string }} */ (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'))).version;
  const epoch = sourceDateEpoch();
  const created = new Date(epoch * 1000).toISOString();
  const cacheRoot = process.env['METAL_L2_IMAGE_CACHE'] ?? join(homedir(), '.cache', 'metal-l2', 'image');
  mkdirSync(cacheRoot, { recursive: true });

  const base = baseLayout(cacheRoot, epoch);
  const modules = productionModules(cacheRoot);
  pruneCache(cacheRoot, [base, modules]);

  const out = opts.out;
  mkdirSync(out, { recursive: true });
  const work = join(out, `.work-${process.pid}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const workspaces = stageApp(modules, join(work, 'stage'));
  log(`app: /app with ${workspaces.join(', ')}`);
  tarDir(join(work, 'stage'), join(work, 'app.tar'), { epoch, forceRoot: true });

  const oci = join(work, 'oci');
  cpSync(join(base, 'oci'), oci, { recursive: true });
  const image = `${oci}:${version}`;
  run(
    'umoci',
    [
      'raw',
      'add-layer',
      '--image',
      `${oci}:base`,
      '--tag',
      version,
      '--history.created',
      created,
      '--history.created_by',
      'hack/build-image.js: /app (npm ci --omit=dev + dist)',
      join(work, 'app.tar'),
    ],
    { quiet: true },
  );
  const revision = gitRevision();
  run(
    'umoci',
    [
      'config',
      '--image',
      image,
      '--created',
      created,
      '--author',
      'metal-l2',
      '--history.created',
      created,
      '--history.created_by',
      'hack/build-image.js: config',
      '--config.user',
      NONROOT,
      '--config.workingdir',
      '/app',
      '--config.env',
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--config.env',
      'NODE_ENV=production',
      // Trust the system CA bundle (/etc/ssl/certs, where an operator mounts a proxy's CA) besides
      // node's built-in one, as Debian's node did: the official build reads only its own by default.
      '--config.env',
      'NODE_USE_SYSTEM_CA=1',
      '--config.entrypoint',
      '/usr/bin/node',
      '--config.cmd',
      '/app/packages/ipam-controller/dist/main.js',
      '--config.label',
      'org.opencontainers.image.title=metal-l2',
      '--config.label',
      'org.opencontainers.image.description=metal-l2 IPAM and network controllers (node /app/packages/<ipam|network>-controller/dist/main.js)',
      '--config.label',
      `org.opencontainers.image.version=${version}`,
      '--config.label',
      `org.opencontainers.image.revision=${revision}`,
      '--config.label',
      'org.opencontainers.image.licenses=Apache-2.0',
      '--config.label',
      'org.opencontainers.image.base.name=debian:trixie (mmdebstrap, trimmed)',
      '--manifest.annotation',
      `org.opencontainers.image.version=${version}`,
    ],
    { quiet: true },
  );
  run('umoci', ['rm', '--image', `${oci}:base`], { quiet: true });
  run('umoci', ['gc', '--layout', oci], { quiet: true });

  const finalOci = join(out, 'oci');
  rmSync(finalOci, { recursive: true, force: true });
  renameSync(oci, finalOci);
  const archive = join(out, `metal-l2-${version}.oci.tar`);
  if (opts.archive) {
    rmSync(archive, { force: true });
    run('skopeo', ['copy', '--quiet', `oci:${finalOci}:${version}`, `oci-archive:${archive}:metal-l2:${version}`], { quiet: true });
  }
  rmSync(work, { recursive: true, force: true });

  const info = describe(finalOci, version);
  const result = {
    reference: `metal-l2:${version}`,
    digest: info.digest,
    layout: relative(repoRoot, finalOci),
    archive: opts.archive ? relative(repoRoot, archive) : undefined,
    archiveBytes: opts.archive ? statSync(archive).size : undefined,
    compressedBytes: info.compressed,
    layers: info.layers,
    uncompressedBytes: info.uncompressed,
    node: JSON.parse(readFileSync(join(base, 'base.json'), 'utf8')).node,
    entrypoints: {
      ipam: ['/usr/bin/node', '/app/packages/ipam-controller/dist/main.js'],
      network: ['/usr/bin/node', '/app/packages/network-controller/dist/main.js'],
    },
    user: NONROOT,
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
  writeFileSync(join(out, 'image.json'), `${JSON.stringify(result, null, 2)}\n`);
  const mb = (/** @type {number} */ n) => `${(n / 1e6).toFixed(1)} MB`;
  process.stdout.write(
    `image   ${result.reference}\n` +
      `digest  ${result.digest}\n` +
      `size    ${mb(result.compressedBytes)} compressed (${result.layers.map((l) => mb(l.size)).join(' + ')}), ${mb(result.uncompressedBytes)} unpacked\n` +
      `layout  ${result.layout} (oci:${result.layout}:${version})\n` +
      (opts.archive ? `archive ${result.archive} (${mb(result.archiveBytes ?? 0)}; skopeo copy oci-archive:… / podman load -i …)\n` : '') +
      `built in ${result.seconds}s\n`,
  );
}

/** Manifest digest and sizes from the layout's index. @param {string} oci @param {string} tag */
function describe(oci, tag) {
  /** @type {{ manifests: { digest: string, annotations?: Record<string, string> }[] }} */
  const index = JSON.parse(readFileSync(join(oci, 'index.json'), 'utf8'));
  const entry = index.manifests.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === tag);
  if (entry === undefined) throw new Error(`tag ${tag} not in ${oci}/index.json`);
  const blob = (/** @type {string} */ digest) => join(oci, 'blobs', ...digest.split(':'));
  /** @type {{ config: { digest: string, size: number }, layers: { digest: string, size: number }[] }} */
  const manifest = JSON.parse(readFileSync(blob(entry.digest), 'utf8'));
  /** @type {{ rootfs: { diff_ids: string[] } }} */
  const config = JSON.parse(readFileSync(blob(manifest.config.digest), 'utf8'));
  let uncompressed = 0;
  for (const l of manifest.layers) {
    // gzip's trailer holds the uncompressed size modulo 2^32: fine for layers under 4 GiB.
    const data = readFileSync(blob(l.digest));
    uncompressed += data.readUInt32LE(data.length - 4);
  }
  return {
    digest: entry.digest,
    compressed: manifest.layers.reduce((n, l) => n + l.size, manifest.config.size + statSync(blob(entry.digest)).size),
    layers: manifest.layers.map((l, i) => ({ digest: l.digest, size: l.size, diffId: config.rootfs.diff_ids[i] })),
    uncompressed,
  };
}

try {
  main();
} catch (err) {
  process.stderr.write(`build-image: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
