// A Flatcar-style guest's first boot, the part that happens before systemd. The caller has run
// Ignition's own files stage on the device's user data against an empty root directory; here
// systemd's first-boot preset enables the units Ignition marked enabled (Flatcar boots its first
// time without a machine-id, so systemd presets them), and the result travels to the guest as one
// more archive in its initrd: the image's initramfs copies /ignition-root onto the root before
// systemd starts, as Flatcar's Ignition writes into /sysroot from its initramfs. The root itself
// stays the shared image's throwaway snapshot.
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface IgnitionInitrdOptions {
  /** What Ignition's files stage wrote; must be named `ignition-root` (the initramfs looks for /ignition-root). */
  readonly root: string;
  /** The image's initrd (GuestImage.initrd). */
  readonly baseInitrd: string;
  /** Where the initrd goes. */
  readonly workDir: string;
}

export interface IgnitionInitrd {
  /** The initrd to boot (GuestOptions.initrd). */
  readonly initrd: string;
  /** What Ignition and the preset wrote, root-relative (`etc/systemd/network/...`), sorted. */
  readonly files: readonly string[];
}

/**
 * What Ignition's files stage needs of the guest's root before it writes: the accounts it resolves
 * owners against (CABPK writes `user: {name: root}` on every file; Ignition looks the name up in the
 * root's /etc/passwd and /etc/group), read out of the image's file system with debugfs (no mount).
 * They reach the guest again unchanged unless the config adds users.
 */
export async function seedIgnitionRoot(options: { readonly rootfs: string; readonly root: string }): Promise<void> {
  await mkdir(join(options.root, 'etc'), { recursive: true });
  for (const file of ['passwd', 'group', 'shadow', 'gshadow']) {
    const target = join(options.root, 'etc', file);
    await run('debugfs', ['-R', `dump -p /etc/${file} ${target}`, options.rootfs]);
    if ((await readFile(target).catch(() => undefined)) === undefined) throw new Error(`no /etc/${file} in ${options.rootfs}`);
  }
}

async function listFiles(root: string): Promise<string[]> {
  const { stdout } = await run('find', ['.', '-mindepth', '1', '(', '-type', 'f', '-o', '-type', 'l', ')'], { cwd: root });
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.replace(/^\.\//, ''))
    .sort();
}

/** Applies the first-boot preset to Ignition's output and packs it into the guest's initrd. */
export async function ignitionInitrd(options: IgnitionInitrdOptions): Promise<IgnitionInitrd> {
  if (basename(options.root) !== 'ignition-root') throw new Error(`the Ignition root must be named ignition-root, not ${options.root}`);
  await run('systemctl', [`--root=${options.root}`, 'preset-all']);
  const files = await listFiles(options.root);
  const { stdout: cpio } = await run('sh', ['-c', 'find ignition-root | cpio -o -H newc --quiet'], {
    cwd: dirname(options.root),
    encoding: 'buffer',
    maxBuffer: 256 << 20,
  });
  // Linux unpacks concatenated archives, compressed or not, one after the other.
  const initrd = join(options.workDir, 'initrd.img');
  await writeFile(initrd, Buffer.concat([cpio, await readFile(options.baseInitrd)]));
  return { initrd, files };
}
