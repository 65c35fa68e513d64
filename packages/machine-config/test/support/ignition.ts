// Ignition's own programs, built from the Go module proxy by hack/build-ignition.sh (cached by
// version): ignition-validate judges a rendered config, as the real cloud-init judges cloud-config;
// the files stage writes a config's files and units under a root directory, as on a first boot.
// Spec 2.x goes to Ignition v0.35.0, spec 3.x to v2.24.0 (each refuses the other family).
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BUILD_SCRIPT = fileURLToPath(new URL('../../../../hack/build-ignition.sh', import.meta.url));

export interface IgnitionBinaries {
  /** Ignition v0.35.0: spec 2.x. */
  spec2: { validate: string; ignition: string };
  /** Ignition v2.24.0: spec 3.x. */
  spec3: { validate: string; apply: string };
}

let binaries: Promise<IgnitionBinaries> | undefined;

/** Builds (first call, minutes) or finds (cached) the four binaries. */
export function ignitionBinaries(): Promise<IgnitionBinaries> {
  binaries ??= run('bash', [BUILD_SCRIPT], { maxBuffer: 16 * 1024 * 1024 }).then(({ stdout }) => {
    const [validate2 = '', ignition = '', validate3 = '', apply = ''] = stdout.trim().split('\n');
    return { spec2: { validate: validate2, ignition }, spec3: { validate: validate3, apply } };
  });
  return binaries;
}

/** The spec family of a config, from its `ignition.version`. */
export function specFamily(config: string): '2' | '3' {
  const version = (JSON.parse(config) as { ignition?: { version?: unknown } }).ignition?.version;
  if (typeof version === 'string' && (version.startsWith('2.') || version.startsWith('3.'))) return version.startsWith('2.') ? '2' : '3';
  throw new Error(`not an Ignition spec 2.x or 3.x config (ignition.version ${JSON.stringify(version)})`);
}

export interface ValidateResult {
  /** The validator's exit status: 0 when it found no errors. */
  code: number;
  /** Every line it printed (its errors and warnings), empty when it found nothing. */
  findings: string[];
}

async function withConfigFile<T>(config: string, use: (dir: string, file: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'ignition-'));
  try {
    const file = join(dir, 'config.ign');
    await writeFile(file, config);
    return await use(dir, file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs the real ignition-validate of the config's spec family on it. */
export async function validateIgnition(config: string): Promise<ValidateResult> {
  const bins = await ignitionBinaries();
  const validator = specFamily(config) === '2' ? bins.spec2.validate : bins.spec3.validate;
  return withConfigFile(config, async (_dir, file) => {
    const result = await run(validator, [file]).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (err: { code?: number; stdout?: string; stderr?: string }) => ({
        code: typeof err.code === 'number' ? err.code : 1,
        output: `${err.stdout ?? ''}${err.stderr ?? ''}`,
      }),
    );
    const findings = result.output.split('\n').filter((l) => l.trim() !== '');
    return { code: result.code, findings };
  });
}

/**
 * Ignition's files stage against `root` (which must exist): files, units, unit enablement (presets),
 * as at first boot. Run as root (it sets ownership). Throws with Ignition's log when it fails.
 */
export async function applyIgnitionFiles(config: string, root: string): Promise<string> {
  const bins = await ignitionBinaries();
  return withConfigFile(config, async (dir, file) => {
    const [command, args, env] =
      specFamily(config) === '2'
        ? [
            bins.spec2.ignition,
            ['-oem', 'file', '-stage', 'files', '-root', root, '-log-to-stdout', '-config-cache', join(dir, 'cache.json')],
            { IGNITION_CONFIG_FILE: file },
          ]
        : [bins.spec3.apply, ['--root', root, file], {}];
    try {
      const { stdout, stderr } = await run(command, args, { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', ...env } });
      return stdout + stderr;
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      throw new Error(`Ignition's files stage failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`, { cause: err });
    }
  });
}
