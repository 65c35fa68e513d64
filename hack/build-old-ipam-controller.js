// An earlier release of the IPAM controller, for the upgrade test
// (packages/ipam-controller/test/upgrade.test.ts): its packages are taken from this repository's
// history (git archive), built with this checkout's TypeScript and third-party node_modules (an
// offline `npm ci` may not work), and kept in ~/.cache/metal-l2/ipam-old/<commit>, so later runs
// reuse it. Its own workspace links point at its own packages, never at this tree's. `.ci/run`
// builds it in its install phase (hack/build-test-artifacts.js); the test builds it when missing.
//
// Usage: node hack/build-old-ipam-controller.js [commit]    prints "<commit> <path of main.js>"
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));

/** The release the upgrade test starts from: the last before IPAddressBlocks (main at e227631). */
export const UPGRADE_FROM = 'e227631';

/** The packages the IPAM controller is built from (itself and its workspace dependencies). */
const PACKAGES = ['api', 'ipam-core', 'kube', 'metal-api', 'ipam-controller'];

/** Builds (once per commit) the IPAM controller of `commit`; returns the path of its main.js. @param {string} commit */
export function buildOldIpamController(commit) {
  const cacheRoot = process.env['METAL_L2_CACHE'] ?? join(homedir(), '.cache', 'metal-l2');
  const dir = join(cacheRoot, 'ipam-old', commit);
  const main = join(dir, 'packages', 'ipam-controller', 'dist', 'main.js');
  if (existsSync(join(dir, '.built'))) {
    // The links point into the checkout that built the cache, which may be gone (another clone or
    // worktree): only the compiled tree is cached, the third-party links are this checkout's.
    rmSync(join(dir, 'node_modules'), { recursive: true, force: true });
    linkNodeModules(dir);
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
    ...PACKAGES.map((p) => `packages/${p}`),
  ]);
  execFileSync('tar', ['-xf', archive, '-C', staging]);
  rmSync(archive);
  linkNodeModules(staging);
  execFileSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'packages/ipam-controller'], {
    cwd: staging,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  writeFileSync(join(staging, '.built'), `${commit}\n`);
  // Parallel builds of one commit are equivalent: whichever renames last wins.
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  return main;
}

/** Third-party packages from this checkout; the @metal-l2 workspace links to the old tree's own packages. @param {string} dir */
function linkNodeModules(dir) {
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, '@metal-l2'), { recursive: true });
  for (const entry of readdirSync(join(repoRoot, 'node_modules'))) {
    if (entry === '@metal-l2' || entry === '.bin' || entry.startsWith('.package-lock')) continue;
    symlinkSync(join(repoRoot, 'node_modules', entry), join(modules, entry));
  }
  for (const name of PACKAGES) symlinkSync(join('..', '..', 'packages', name), join(modules, '@metal-l2', name));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const commit = process.argv[2] ?? UPGRADE_FROM;
  process.stdout.write(`${commit} ${buildOldIpamController(commit)}\n`);
}
