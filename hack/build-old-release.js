// An earlier release of one of our programs, for the upgrade tests: its packages are taken from
// this repository's history (git archive), built with this checkout's TypeScript and third-party
// node_modules (an offline `npm ci` may not work), and kept in
// ~/.cache/metal-l2/old-releases/<commit>/<package>, so later runs reuse it. Its own workspace links
// point at its own packages, never at this tree's. `.ci/run` builds every release in OLD_RELEASES in
// its install phase (hack/build-test-artifacts.js); a test builds one when it is missing.
//
// Usage: node hack/build-old-release.js <commit> <package>    prints "<commit> <path of main.js>"
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));

/** The releases the upgrade tests start from. */
export const OLD_RELEASES = [
  // The IPAM controller's last release before IPAddressBlocks (packages/ipam-controller/test/upgrade.test.ts).
  { commit: 'e227631', pkg: 'ipam-controller' },
  // The network controller's release before what the OS was given was recorded (test/e2e/network-upgrade.test.ts, first step).
  { commit: 'a1a0fec', pkg: 'network-controller' },
  // The network controller's previous release: records with renderer version 1, Ignition served (the same test).
  { commit: '1f1ad9c', pkg: 'network-controller' },
  // The IPAM controller's release before pools were stamped with the cluster that allocates from them
  // (packages/ipam-controller/test/upgrade-stamps.test.ts).
  { commit: 'a1a0fec', pkg: 'ipam-controller' },
];

/** The workspace packages `pkg` is built from at `commit` (itself last), from its tsconfig references. */
function packagesOf(commit, pkg, seen = new Set()) {
  if (seen.has(pkg)) return [];
  seen.add(pkg);
  const tsconfig = execFileSync('git', ['-C', repoRoot, 'show', `${commit}:packages/${pkg}/tsconfig.json`], { encoding: 'utf8' });
  /** @type {{ references?: { path: string }[] }} */
  const parsed = JSON.parse(tsconfig);
  const deps = (parsed.references ?? []).flatMap(({ path }) => packagesOf(commit, path.replace(/^\.\.\//, ''), seen));
  return [...deps, pkg];
}

/** Builds (once per commit) the package `pkg` of `commit`; returns the path of its dist/main.js. @param {string} commit @param {string} pkg */
export function buildOldRelease(commit, pkg) {
  const cacheRoot = process.env['METAL_L2_CACHE'] ?? join(homedir(), '.cache', 'metal-l2');
  const dir = join(cacheRoot, 'old-releases', commit, pkg);
  const main = join(dir, 'packages', pkg, 'dist', 'main.js');
  const packages = packagesOf(commit, pkg);
  if (existsSync(join(dir, '.built'))) {
    // The links point into the checkout that built the cache, which may be gone (another clone or
    // worktree): only the compiled tree is cached, the third-party links are this checkout's.
    rmSync(join(dir, 'node_modules'), { recursive: true, force: true });
    linkNodeModules(dir, packages);
    return main;
  }
  const staging = `${dir}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const archive = join(staging, 'source.tar');
  execFileSync('git', [
    '-C',
    repoRoot,
    'archive',
    '--output',
    archive,
    commit,
    'tsconfig.base.json',
    ...packages.map((p) => `packages/${p}`),
  ]);
  execFileSync('tar', ['-xf', archive, '-C', staging]);
  rmSync(archive);
  linkNodeModules(staging, packages);
  execFileSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', `packages/${pkg}`], {
    cwd: staging,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  writeFileSync(join(staging, '.built'), `${commit}\n`);
  // Parallel builds of one commit are equivalent: whichever renames last wins.
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  return main;
}

/** Third-party packages from this checkout; the @metal-l2 workspace links to the old tree's own packages. @param {string} dir @param {string[]} packages */
function linkNodeModules(dir, packages) {
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, '@metal-l2'), { recursive: true });
  for (const entry of readdirSync(join(repoRoot, 'node_modules'))) {
    if (entry === '@metal-l2' || entry === '.bin' || entry.startsWith('.package-lock')) continue;
    symlinkSync(join(repoRoot, 'node_modules', entry), join(modules, entry));
  }
  for (const name of packages) symlinkSync(join('..', '..', 'packages', name), join(modules, '@metal-l2', name));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [commit, pkg] = process.argv.slice(2);
  if (commit === undefined || pkg === undefined) {
    process.stderr.write('usage: node hack/build-old-release.js <commit> <package>\n');
    process.exit(2);
  }
  process.stdout.write(`${commit} ${buildOldRelease(commit, pkg)}\n`);
}
