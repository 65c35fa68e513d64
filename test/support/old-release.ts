import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './paths.js';

const run = promisify(execFile);

/**
 * The main.js of package `pkg` (e.g. `network-controller`) at an earlier release `commit`, for
 * upgrade tests: from its cache, which `.ci/run` fills in its install phase
 * (hack/build-old-release.js holds the recipe and the list), or built now (about a minute).
 */
export async function oldReleaseMain(commit: string, pkg: string): Promise<string> {
  const { stdout } = await run(process.execPath, [join(repoRoot, 'hack', 'build-old-release.js'), commit, pkg], {
    cwd: repoRoot,
    maxBuffer: 16 * 1024 * 1024,
  });
  // The last line: "<commit> <path of main.js>".
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return line.slice(line.indexOf(' ') + 1);
}
