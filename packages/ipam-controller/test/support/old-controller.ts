import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@metal-l2/test-support/paths';

const run = promisify(execFile);

/**
 * The IPAM controller of the release upgrade tests start from (hack/build-old-ipam-controller.js
 * names the commit and holds the recipe): from its cache, which `.ci/run` fills in its install
 * phase, or built now (about a minute) when missing.
 */
export async function oldIpamController(): Promise<string> {
  const { stdout } = await run(process.execPath, [join(repoRoot, 'hack', 'build-old-ipam-controller.js')], {
    cwd: repoRoot,
    maxBuffer: 16 * 1024 * 1024,
  });
  // The last line: "<commit> <path of main.js>".
  const line = stdout.trim().split('\n').at(-1) ?? '';
  return line.slice(line.indexOf(' ') + 1);
}
