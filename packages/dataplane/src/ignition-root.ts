// A Flatcar-style guest's first boot, the part that happens before systemd: Ignition's own files
// stage applies the device's user data to an empty root directory, systemd's first-boot preset
// enables the units Ignition marked enabled (Flatcar boots its first time without a machine-id, so
// systemd presets them), and the result travels to the guest as one more archive in its initrd
// (the image's initramfs copies /ignition-root onto the root before systemd starts, as Flatcar's
// Ignition writes into /sysroot from its initramfs). The root stays the shared image's snapshot.
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Ignition's programs (hack/build-ignition.sh builds them from the Go module proxy). */
export interface IgnitionTools {
  /** Ignition v0.35's `ignition` (spec 2.x, what CABPK v1.7 emits): `-oem file -stage files -root`. */
  readonly spec2: string;
  /** Ignition v2's `ignition-apply` (spec 3.x): `--root DIR config.ign`. */
  readonly spec3: string;
}

export interface IgnitionInitrdOptions {
  /** The device's user data, exactly as Metal holds it. */
  readonly userData: string;
  readonly tools: IgnitionTools;
  /** The image's initrd (GuestImage.initrd). */
  readonly baseInitrd: string;
  /** A private directory: the config, Ignition's root and log, and the initrd go there. */
  readonly workDir: string;
}

export interface IgnitionInitrd {
  /** The initrd to boot (GuestOptions.initrd). */
  readonly initrd: string;
  /** The spec version the user data declared. */
  readonly specVersion: string;
  /** What Ignition's files stage and the preset wrote, root-relative (`etc/systemd/network/...`), sorted. */
  readonly files: readonly string[];
  /** Ignition's own log of the stage. */
  readonly log: string;
}

/** `ignition.version` of an Ignition config, or an error naming what is wrong with the user data. */
export function ignitionSpecVersion(userData: string): string {
  let doc: unknown;
  try {
    doc = JSON.parse(userData);
  } catch (err: unknown) {
    throw new Error(`the user data is not an Ignition config (not JSON: ${(err as Error).message})`);
  }
  const version = (doc as { ignition?: { version?: unknown } } | null)?.ignition?.version;
  if (typeof version !== 'string') throw new Error('the user data is not an Ignition config (no ignition.version)');
  return version;
}

async function applyFilesStage(options: IgnitionInitrdOptions, specVersion: string, root: string): Promise<string> {
  const config = join(options.workDir, 'user-data.ign');
  await writeFile(config, options.userData);
  const major = specVersion.split('.')[0];
  if (major === '2') {
    // The config cache would default to the host's /run/ignition.json.
    const argv = ['-oem', 'file', '-stage', 'files', '-root', root, '-config-cache', join(options.workDir, 'cache.json'), '-log-to-stdout'];
    const r = await run(options.tools.spec2, argv, { env: { ...process.env, IGNITION_CONFIG_FILE: config }, maxBuffer: 16 << 20 });
    return r.stdout + r.stderr;
  }
  if (major === '3') {
    const r = await run(options.tools.spec3, ['--root', root, config], { maxBuffer: 16 << 20 });
    return r.stdout + r.stderr;
  }
  throw new Error(`Ignition spec ${specVersion}: no Ignition here runs it (2.x: v0.35, 3.x: v2)`);
}

async function listFiles(root: string): Promise<string[]> {
  const { stdout } = await run('find', ['.', '-mindepth', '1', '(', '-type', 'f', '-o', '-type', 'l', ')'], { cwd: root });
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^\.\//, ''))
    .sort();
}

/** Runs Ignition's files stage on the user data and packs what it wrote into the guest's initrd. */
export async function ignitionInitrd(options: IgnitionInitrdOptions): Promise<IgnitionInitrd> {
  const specVersion = ignitionSpecVersion(options.userData);
  const root = join(options.workDir, 'ignition-root');
  await mkdir(root, { recursive: true });
  let log: string;
  try {
    log = await applyFilesStage(options, specVersion, root);
  } catch (err: unknown) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`Ignition's files stage refused the user data (spec ${specVersion}): ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
  await run('systemctl', [`--root=${root}`, 'preset-all']);
  const files = await listFiles(root);
  await run('sh', ['-c', 'find ignition-root | cpio -o -H newc --quiet > ignition-root.cpio'], { cwd: options.workDir });
  // Linux unpacks concatenated archives, compressed or not, one after the other.
  const initrd = join(options.workDir, 'initrd.img');
  const parts = await Promise.all([readFile(join(options.workDir, 'ignition-root.cpio')), readFile(options.baseInitrd)]);
  await writeFile(initrd, Buffer.concat(parts));
  return { initrd, specVersion, files, log };
}
