import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SANDBOX_IMAGE } from './node-config.js';

const run = promisify(execFile);
const BUSYBOX = '/bin/busybox';
const PAUSE_RECIPE = 2;

function cacheRoot(): string {
  return process.env['METAL_L2_CACHE'] ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'metal-l2');
}

/**
 * The pod sandbox image, built here (no registry is reachable): a static busybox that sleeps as the
 * sandbox's process, packed with umoci and copied to a docker-archive with skopeo. Cached by the
 * busybox binary's hash and the recipe.
 */
export async function sandboxImageArchive(): Promise<string> {
  const busybox = await readFile(BUSYBOX);
  const key = createHash('sha256').update(busybox).update(String(PAUSE_RECIPE)).digest('hex').slice(0, 16);
  const dir = join(cacheRoot(), 'node', `pause-${key}`);
  const archive = join(dir, 'pause.tar');
  if (existsSync(archive)) return archive;
  await mkdir(join(cacheRoot(), 'node'), { recursive: true });
  const work = await mkdtemp(join(cacheRoot(), 'node', 'pause-work-'));
  try {
    const rootfs = join(work, 'rootfs');
    await mkdir(join(rootfs, 'bin'), { recursive: true });
    await copyFile(BUSYBOX, join(rootfs, 'bin', 'busybox'));
    const layer = join(work, 'layer.tar');
    await run('tar', [
      '--create',
      `--file=${layer}`,
      `--directory=${rootfs}`,
      '--sort=name',
      '--numeric-owner',
      '--owner=0',
      '--group=0',
      '--mtime=@0',
      'bin',
    ]);
    const oci = join(work, 'oci');
    await run('umoci', ['init', '--layout', oci]);
    await run('umoci', ['new', '--image', `${oci}:pause`]);
    await run('umoci', ['raw', 'add-layer', '--image', `${oci}:pause`, layer]);
    await run('umoci', [
      ...['config', '--image', `${oci}:pause`, '--config.user', '65535:65535'],
      ...['--config.entrypoint', '/bin/busybox', '--config.cmd', 'sleep', '--config.cmd', '2147483647'],
    ]);
    const tmpArchive = join(work, 'pause.tar');
    await run('skopeo', ['copy', '--quiet', `oci:${oci}:pause`, `docker-archive:${tmpArchive}:${SANDBOX_IMAGE}`]);
    await mkdir(dir, { recursive: true });
    await rename(tmpArchive, archive);
    await writeFile(join(dir, 'image.txt'), `${SANDBOX_IMAGE} from ${BUSYBOX}\n`);
    return archive;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** `ctr images import` of a docker-archive into the node's containerd, in the CRI's namespace. */
export async function importArchive(containerdSocket: string, archive: string): Promise<void> {
  await run('ctr', ['--address', containerdSocket, '-n', 'k8s.io', 'images', 'import', archive], {
    maxBuffer: 16 * 1024 * 1024,
  });
}

/**
 * Imports an image from an OCI layout (what `npm run image` writes to .local/image/oci) under
 * `reference`, through a docker-archive: the CRI then finds it by that name with
 * imagePullPolicy Never. Returns the image's digest as containerd holds it.
 */
export async function importOciLayout(
  containerdSocket: string,
  image: { readonly layoutDir: string; readonly tag: string; readonly reference: string },
): Promise<string> {
  const { layoutDir, tag, reference } = image;
  const work = await mkdtemp(join(cacheRoot(), 'node', 'import-'));
  try {
    const archive = join(work, 'image.tar');
    await run('skopeo', ['copy', '--quiet', `oci:${layoutDir}:${tag}`, `docker-archive:${archive}:${reference}`], {
      maxBuffer: 16 * 1024 * 1024,
    });
    await importArchive(containerdSocket, archive);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return imageDigest(containerdSocket, reference);
}

export async function imageDigest(containerdSocket: string, reference: string): Promise<string> {
  const { stdout } = await run('ctr', ['--address', containerdSocket, '-n', 'k8s.io', 'images', 'ls']);
  const name = reference.includes('/') ? reference : `docker.io/library/${reference}`;
  for (const line of stdout.split('\n')) {
    const [ref, , digest] = line.split(/\s+/);
    if (ref === name || ref === reference) return digest ?? '';
  }
  throw new Error(`image ${reference} not in the node's containerd after import`);
}
