// Ignition's own programs for the tests, built by hack/build-ignition.sh from the Go module proxy
// (cached by version: a second call returns at once): each spec family's validator, and the
// programs that run the files stage against a root directory.
import { execFile } from 'node:child_process';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './paths.js';

const run = promisify(execFile);

export interface IgnitionToolPaths {
  /** Ignition v0.35 (spec 2.x). */
  readonly spec2: { readonly validate: string; readonly ignition: string };
  /** Ignition v2 (spec 3.x). */
  readonly spec3: { readonly validate: string; readonly apply: string };
}

let built: Promise<IgnitionToolPaths> | undefined;

/** The paths, building them first when this version is not cached (a cold build takes minutes). */
export function ignitionTools(): Promise<IgnitionToolPaths> {
  built ??= build();
  return built;
}

async function build(): Promise<IgnitionToolPaths> {
  const script = join(repoRoot, 'hack', 'build-ignition.sh');
  let stdout: string;
  try {
    ({ stdout } = await run('bash', [script], { maxBuffer: 16 << 20, timeout: 30 * 60_000 }));
  } catch (err: unknown) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`${script} failed; run it by hand to see why\n${stderr.split('\n').slice(-5).join('\n')}`, { cause: err });
  }
  const paths = stdout.split('\n').filter((l) => l.startsWith('/'));
  // Each binary sits in <cache>/ignition/<version>/bin: the version's major picks the spec family.
  const find = (major: string, name: string): string => {
    const path = paths.find((p) => basename(p) === name && basename(dirname(dirname(p))).startsWith(`v${major}.`));
    if (path === undefined) throw new Error(`${script} printed no ${name} for Ignition v${major}.x:\n${stdout}`);
    return path;
  };
  return {
    spec2: { validate: find('0', 'ignition-validate'), ignition: find('0', 'ignition') },
    spec3: { validate: find('2', 'ignition-validate'), apply: find('2', 'ignition-apply') },
  };
}
