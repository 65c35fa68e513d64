// The data-plane guest image: built by guest/build-image.sh from Debian packages, cached under
// $METAL_L2_CACHE/guest/<hash> (default ~/.cache/metal-l2), where the hash covers every file of the
// recipe (guest/) and the kernel version, so the image is rebuilt only when the recipe changes.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface GuestImage {
  readonly dir: string;
  readonly kernel: string;
  readonly initrd: string;
  readonly rootfs: string;
  readonly kernelVersion: string;
  readonly hash: string;
  /** True when this call built it (false: found in the cache). */
  readonly built: boolean;
  readonly buildMs: number;
}

export interface GuestImageOptions {
  /** The metal-l2 cache root; default $METAL_L2_CACHE, else $XDG_CACHE_HOME/metal-l2, else ~/.cache/metal-l2. */
  readonly cacheRoot?: string;
  /** Default: the newest /boot/vmlinuz-* (Debian's linux-image-amd64). */
  readonly kernelVersion?: string;
  /** Deadline for a build (mmdebstrap downloads packages); default 15 minutes. */
  readonly buildTimeoutMs?: number;
  readonly log?: (message: string) => void;
}

/** The recipe: this package's guest/ folder (from src/ and from dist/ alike). */
export const RECIPE_DIR = fileURLToPath(new URL('../guest/', import.meta.url));

export function defaultCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['METAL_L2_CACHE'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache'), 'metal-l2');
}

async function newestKernel(): Promise<string> {
  const versions = (await readdir('/boot')).filter((f) => f.startsWith('vmlinuz-')).map((f) => f.slice('vmlinuz-'.length));
  const newest = versions.sort((a, b) => a.localeCompare(b, undefined, { numeric: true })).at(-1);
  if (newest === undefined) throw new Error('no Debian kernel in /boot: install linux-image-amd64');
  return newest;
}

async function recipeFiles(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(join(dir, prefix), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = join(prefix, entry.name);
    if (entry.isDirectory()) out.push(...(await recipeFiles(dir, rel)));
    else out.push(rel);
  }
  return out;
}

/** The cache key: every recipe file (name and bytes) and the kernel version. */
export async function recipeHash(kernelVersion: string, recipeDir = RECIPE_DIR): Promise<string> {
  const h = createHash('sha256');
  h.update(`kernel ${kernelVersion}\n`);
  for (const rel of await recipeFiles(recipeDir)) {
    h.update(`file ${rel}\n`);
    h.update(await readFile(join(recipeDir, rel)));
  }
  return h.digest('hex').slice(0, 16);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** One builder per image across processes: a lock directory holding the builder's pid. */
async function withLock<T>(lockDir: string, deadlineMs: number, body: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      await mkdir(lockDir);
      await writeFile(join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (err: unknown) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number((await readFile(join(lockDir, 'pid'), 'utf8').catch(() => '')) || NaN);
      if (Number.isInteger(holder) && !pidAlive(holder)) {
        await rm(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the guest image lock ${lockDir}`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
  try {
    return await body();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

async function runBuild(options: {
  outDir: string;
  kernelVersion: string;
  logFile: string;
  timeoutMs: number;
  baseDir: string;
}): Promise<void> {
  const log = createWriteStream(options.logFile);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn('bash', [join(RECIPE_DIR, 'build-image.sh'), options.outDir, options.kernelVersion], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, METAL_L2_GUEST_BASE_DIR: options.baseDir },
      });
      child.stdout.pipe(log, { end: false });
      child.stderr.pipe(log, { end: false });
      const timer = setTimeout(() => child.kill('SIGTERM'), options.timeoutMs);
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new Error(`guest image build failed (${signal ?? `exit ${code}`}); see ${options.logFile}`));
      });
    });
  } finally {
    await new Promise<void>((resolve) => log.end(() => resolve()));
  }
}

/** The cached image for the current recipe, built first when missing. */
export async function ensureGuestImage(options: GuestImageOptions = {}): Promise<GuestImage> {
  const kernelVersion = options.kernelVersion ?? (await newestKernel());
  const hash = await recipeHash(kernelVersion);
  const root = join(options.cacheRoot ?? defaultCacheRoot(), 'guest');
  const dir = join(root, hash);
  const image = (built: boolean, buildMs: number): GuestImage => ({
    dir,
    kernel: join(dir, 'vmlinuz'),
    initrd: join(dir, 'initrd.img'),
    rootfs: join(dir, 'rootfs.ext4'),
    kernelVersion,
    hash,
    built,
    buildMs,
  });
  if (await exists(join(dir, 'ready'))) return image(false, 0);
  await mkdir(root, { recursive: true });
  const timeoutMs = options.buildTimeoutMs ?? 15 * 60_000;
  return withLock(`${dir}.lock`, timeoutMs, async () => {
    if (await exists(join(dir, 'ready'))) return image(false, 0);
    const started = Date.now();
    const outDir = `${dir}.tmp`;
    await rm(outDir, { recursive: true, force: true });
    await mkdir(outDir);
    options.log?.(`building the guest image ${hash} (kernel ${kernelVersion}) into ${dir}`);
    await runBuild({ outDir, kernelVersion, logFile: `${dir}.build.log`, timeoutMs, baseDir: join(root, 'base') });
    await writeFile(join(outDir, 'ready'), `${new Date().toISOString()}\n`);
    await rm(dir, { recursive: true, force: true });
    await rename(outDir, dir);
    return image(true, Date.now() - started);
  });
}
