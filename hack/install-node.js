#!/usr/bin/env node
// Installs the project's Node.js: the official build that the npm registry serves as the package
// node-linux-<arch>, pinned by version and integrity in hack/nodejs/package-lock.json (the one place
// the version lives: bump it in hack/nodejs/package.json, then `npm install --package-lock-only`
// there). `npm pack` fetches the tarball, this script checks it against the lockfile's integrity;
// the binary and its licence are kept in $METAL_L2_CACHE/nodejs/v<version>-linux-<arch>/ (default
// ~/.cache/metal-l2; `node/` there is the one-node cluster's). No other download: Debian 13 serves
// nodejs 20 only, and nodejs.org is not reachable from CI.
//
// .ci/run and hack/demo.sh put the printed directory first on PATH, so npm, jest and every child
// process (spawned with process.execPath) run on it; hack/build-image.js copies the same binary into
// the image. It runs on whatever node and npm start it (the machine's, Node 18 or newer).
//
// Usage: node hack/install-node.js    prints the bin directory (holding `node`) on stdout
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const pinDir = fileURLToPath(new URL('nodejs/', import.meta.url));

/**
 * The pinned package for this machine (or the given platform and architecture).
 * @param {string} [platform] @param {string} [arch]
 * @returns {{ name: string, version: string, integrity: string }}
 */
export function pinnedNode(platform = process.platform, arch = process.arch) {
  /** @type {{ packages: Record<string, { version?: string, integrity?: string }> }} */
  const lock = JSON.parse(readFileSync(join(pinDir, 'package-lock.json'), 'utf8'));
  const name = `node-${platform}-${arch}`;
  const entry = lock.packages[`node_modules/${name}`];
  if (entry?.version === undefined || entry.integrity === undefined) {
    const pinned = Object.keys(lock.packages)
      .filter((k) => k !== '')
      .map((k) => k.replace('node_modules/', ''));
    throw new Error(
      `hack/nodejs/package-lock.json pins no Node.js for ${platform}-${arch} (it pins ${pinned.join(', ')}): install the Node.js version it pins yourself and put it first on PATH`,
    );
  }
  return { name, version: entry.version, integrity: entry.integrity };
}

/**
 * The metal-l2 cache root, as hack/build-control-plane.sh and @metal-l2/capp-fixture's cacheRoot pick it
 * (this script runs before npm ci and the build, so it cannot import that one).
 */
function cacheRoot(/** @type {NodeJS.ProcessEnv} */ env) {
  const explicit = env['METAL_L2_CACHE'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache'), 'metal-l2');
}

/**
 * Installs the pinned Node.js once (cached by version and integrity) and returns where it is.
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {{ name: string, version: string, integrity: string, dir: string, bin: string, node: string, license: string }}
 */
export function installNode(env = process.env) {
  const pin = pinnedNode();
  const dir = join(cacheRoot(env), 'nodejs', `v${pin.version}-${process.platform}-${process.arch}`);
  const result = { ...pin, dir, bin: join(dir, 'bin'), node: join(dir, 'bin', 'node'), license: join(dir, 'LICENSE') };
  if (installed(dir, pin.integrity)) return result;

  const work = `${dir}.tmp-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    // npm pack fetches the tarball (from npm's cache when it has it); the integrity is checked here
    // rather than by `npm ci`, which skips an optional package whose check fails without a word.
    const pack = spawnSync('npm', ['pack', `${pin.name}@${pin.version}`, '--json', '--loglevel=error', '--pack-destination', work], {
      cwd: work,
      stdio: ['ignore', 'pipe', 2],
      encoding: 'utf8',
      env,
    });
    if (pack.error !== undefined) throw new Error(`npm: ${pack.error.message}`);
    if (pack.status !== 0) throw new Error(`npm pack ${pin.name}@${pin.version} exited with ${pack.status ?? pack.signal}`);
    const filename = /** @type {{ filename?: string }[]} */ (JSON.parse(pack.stdout))[0]?.filename;
    if (filename === undefined) throw new Error(`npm pack ${pin.name}@${pin.version} printed no file name: ${pack.stdout}`);
    const tarball = join(work, filename);
    const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
    if (integrity !== pin.integrity) {
      throw new Error(
        `EINTEGRITY: ${pin.name}@${pin.version} from the registry is ${integrity}, hack/nodejs/package-lock.json pins ${pin.integrity}`,
      );
    }
    const tar = spawnSync('tar', ['-xzf', tarball, '-C', work, 'package/bin/node', 'package/LICENSE'], { stdio: ['ignore', 2, 2] });
    if (tar.status !== 0) throw new Error(`tar -xzf ${tarball} exited with ${tar.status ?? tar.signal}`);
    const pkg = join(work, 'package');
    const out = join(work, 'out');
    mkdirSync(join(out, 'bin'), { recursive: true });
    copyFileSync(join(pkg, 'bin', 'node'), join(out, 'bin', 'node'));
    copyFileSync(join(pkg, 'LICENSE'), join(out, 'LICENSE'));
    const version = spawnSync(join(out, 'bin', 'node'), ['--version'], { encoding: 'utf8' });
    if (version.stdout?.trim() !== `v${pin.version}`) {
      throw new Error(
        `${pin.name}@${pin.version}'s bin/node does not run here: ${version.error?.message ?? `${version.stdout}${version.stderr}`}`,
      );
    }
    writeFileSync(join(out, 'integrity'), `${pin.integrity}\n`);
    if (!installed(dir, pin.integrity)) {
      rmSync(dir, { recursive: true, force: true });
      try {
        renameSync(out, dir);
      } catch (err) {
        // Another install of the same pin finished first.
        if (!installed(dir, pin.integrity)) throw err;
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stderr.write(`[install-node] installed node v${pin.version} (${pin.name}, ${pin.integrity.slice(0, 19)}…) into ${dir}\n`);
  return result;
}

/** @param {string} dir @param {string} integrity */
function installed(dir, integrity) {
  const marker = join(dir, 'integrity');
  return existsSync(join(dir, 'bin', 'node')) && existsSync(marker) && readFileSync(marker, 'utf8').trim() === integrity;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${installNode().bin}\n`);
  } catch (err) {
    process.stderr.write(`install-node: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
