import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './paths.js';

// An earlier release of one of our programs, for upgrade tests: its packages are taken from this
// repository's history (git archive), built with this checkout's TypeScript and third-party
// node_modules (an offline `npm ci` may not work), and kept in a cache keyed by the commit and the
// package, so later runs reuse it. Its own workspace links point at its own packages, never at
// this tree's.

const run = promisify(execFile);

/** The workspace packages `pkg` is built from at `commit` (itself last), from its tsconfig references. */
async function packagesOf(commit: string, pkg: string, seen = new Set<string>()): Promise<string[]> {
  if (seen.has(pkg)) return [];
  seen.add(pkg);
  const { stdout } = await run('git', ['-C', repoRoot, 'show', `${commit}:packages/${pkg}/tsconfig.json`]);
  const references = (JSON.parse(stdout) as { references?: { path: string }[] }).references ?? [];
  const deps: string[] = [];
  for (const { path } of references) deps.push(...(await packagesOf(commit, path.replace(/^\.\.\//, ''), seen)));
  return [...deps, pkg];
}

/**
 * Builds (once per commit) the package `pkg` (e.g. `network-controller`) of `commit` with its
 * workspace dependencies, and returns the path of its dist/main.js.
 */
export async function oldReleaseMain(commit: string, pkg: string): Promise<string> {
  const cacheRoot = process.env['METAL_L2_CACHE'] ?? join(homedir(), '.cache', 'metal-l2');
  const dir = join(cacheRoot, 'old-releases', commit, pkg);
  const main = join(dir, 'packages', pkg, 'dist', 'main.js');
  const packages = await packagesOf(commit, pkg);
  if (existsSync(join(dir, '.built'))) {
    // The links point into the checkout that built the cache, which may be gone (another clone or
    // worktree): only the compiled tree is cached, the third-party links are this checkout's.
    await rm(join(dir, 'node_modules'), { recursive: true, force: true });
    await linkNodeModules(dir, packages);
    return main;
  }
  const staging = `${dir}.${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  const archive = join(staging, 'source.tar');
  await run('git', ['-C', repoRoot, 'archive', '--output', archive, commit, 'tsconfig.base.json', ...packages.map((p) => `packages/${p}`)]);
  await run('tar', ['-xf', archive, '-C', staging]);
  await rm(archive);
  await linkNodeModules(staging, packages);
  await run(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', `packages/${pkg}`], {
    cwd: staging,
    maxBuffer: 16 * 1024 * 1024,
  });
  await writeFile(join(staging, '.built'), `${commit}\n`);
  await rm(dir, { recursive: true, force: true });
  await rename(staging, dir);
  return main;
}

/** Third-party packages from this checkout; the @metal-l2 workspace links to the old tree's own packages. */
async function linkNodeModules(dir: string, packages: readonly string[]): Promise<void> {
  const modules = join(dir, 'node_modules');
  await mkdir(join(modules, '@metal-l2'), { recursive: true });
  for (const entry of await readdir(join(repoRoot, 'node_modules'))) {
    if (entry === '@metal-l2' || entry === '.bin' || entry.startsWith('.package-lock')) continue;
    await symlink(join(repoRoot, 'node_modules', entry), join(modules, entry));
  }
  for (const name of packages) await symlink(join('..', '..', 'packages', name), join(modules, '@metal-l2', name));
}
