import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@metal-l2/test-support/paths';

// An earlier release of the controller, for upgrade tests: its packages are taken from this
// repository's history (git archive), built with this checkout's TypeScript and third-party
// node_modules (an offline `npm ci` may not work), and kept in a cache keyed by the commit, so
// later runs reuse it. Its own workspace links point at its own packages, never at this tree's.

const run = promisify(execFile);

/** The packages the IPAM controller is built from (itself and its workspace dependencies). */
const PACKAGES = ['api', 'ipam-core', 'kube', 'metal-api', 'ipam-controller'];

/** Builds (once per commit) the IPAM controller of `commit` and returns the path of its main.js. */
export async function oldIpamController(commit: string): Promise<string> {
  const cacheRoot = process.env['METAL_L2_CACHE'] ?? join(homedir(), '.cache', 'metal-l2');
  const dir = join(cacheRoot, 'ipam-old', commit);
  const main = join(dir, 'packages', 'ipam-controller', 'dist', 'main.js');
  if (existsSync(join(dir, '.built'))) {
    // The links point into the checkout that built the cache, which may be gone (another clone or
    // worktree): only the compiled tree is cached, the third-party links are this checkout's.
    await rm(join(dir, 'node_modules'), { recursive: true, force: true });
    await linkNodeModules(dir);
    return main;
  }
  const staging = `${dir}.${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  const archive = join(staging, 'source.tar');
  await run('git', ['-C', repoRoot, 'archive', '--output', archive, commit, 'tsconfig.base.json', ...PACKAGES.map((p) => `packages/${p}`)]);
  await run('tar', ['-xf', archive, '-C', staging]);
  await rm(archive);
  await linkNodeModules(staging);
  await run(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'packages/ipam-controller'], {
    cwd: staging,
    maxBuffer: 16 * 1024 * 1024,
  });
  await writeFile(join(staging, '.built'), `${commit}\n`);
  await rm(dir, { recursive: true, force: true });
  await rename(staging, dir);
  return main;
}

/** Third-party packages from this checkout; the @metal-l2 workspace links to the old tree's own packages. */
async function linkNodeModules(dir: string): Promise<void> {
  const modules = join(dir, 'node_modules');
  await mkdir(join(modules, '@metal-l2'), { recursive: true });
  for (const entry of await readdir(join(repoRoot, 'node_modules'))) {
    if (entry === '@metal-l2' || entry === '.bin' || entry.startsWith('.package-lock')) continue;
    await symlink(join(repoRoot, 'node_modules', entry), join(modules, entry));
  }
  for (const name of PACKAGES) await symlink(join('..', '..', 'packages', name), join(modules, '@metal-l2', name));
}
