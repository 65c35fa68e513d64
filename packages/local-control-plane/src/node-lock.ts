import { mkdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { delay, isAlive } from './processes.js';

// A node takes host-wide names (its bridge, its CIDRs, its cgroup root) and shares the host's
// iptables with any other node: two kube-proxies rewrite each other's KUBE-SERVICES chain, and a
// teardown removes every KUBE-* chain. So one node runs on a machine at a time, and this file says
// which: a second start (another jest worker's suite, `cluster:up -- --node` beside a test run)
// waits for it to be released or fails, instead of breaking both.

/** Host-wide, as what it guards is; tests of the lock itself pass a file of their own. */
export const NODE_LOCK_FILE = '/run/metal-l2/node.lock';

/** Who holds the node: its state directory, and the processes whose life keeps it held. */
export interface NodeLockHolder {
  readonly stateDir: string;
  /** The starter first; once started, the node's own processes (the starter may exit, as `cluster:up` does). */
  readonly pids: readonly number[];
}

export async function nodeLockHolder(lockFile: string = NODE_LOCK_FILE): Promise<NodeLockHolder | undefined> {
  try {
    return JSON.parse(await readFile(lockFile, 'utf8')) as NodeLockHolder;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock for the node in `stateDir`, waiting up to `waitMs` for another holder to release
 * it. A holder none of whose processes is alive died without stopping its node: its lock is taken
 * over (what it left on the host is the bridge check's business, and a test run's sweep stops it).
 */
export async function acquireNodeLock(
  stateDir: string,
  { waitMs, lockFile = NODE_LOCK_FILE }: { readonly waitMs: number; readonly lockFile?: string },
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const mine: NodeLockHolder = { stateDir, pids: [process.pid] };
    // The directory too, each time: a release removes it once empty.
    await mkdir(dirname(lockFile), { recursive: true });
    const outcome = await writeFile(lockFile, JSON.stringify(mine), { flag: 'wx' }).then(
      () => 'yes' as const,
      (err: NodeJS.ErrnoException) => {
        if (err.code === 'EEXIST') return 'held' as const;
        if (err.code === 'ENOENT') return 'retry' as const;
        throw err;
      },
    );
    if (outcome === 'yes') return;
    if (outcome === 'retry') continue;
    const holder = await nodeLockHolder(lockFile);
    if (holder?.stateDir === stateDir) {
      await writeFile(lockFile, JSON.stringify(mine));
      return;
    }
    if (holder !== undefined && !holder.pids.some((pid) => isAlive(pid))) {
      // Removed, then created again above (exclusively; should two waiters race here, the bridge check still stops one).
      await rm(lockFile, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `another node runs on this machine (state in ${holder?.stateDir ?? '?'}, ${lockFile}): ` +
          'one node at a time; stop it first (npm run cluster:down, npm run demo:down, or let its test run end)',
      );
    }
    await delay(1_000);
  }
}

/** Once the node runs: its processes keep the lock held after the starter exits. */
export async function recordNodeLockPids(stateDir: string, pids: readonly number[], lockFile: string = NODE_LOCK_FILE): Promise<void> {
  const holder = await nodeLockHolder(lockFile);
  if (holder?.stateDir !== stateDir) throw new Error(`the node lock is not held for ${stateDir}`);
  await writeFile(lockFile, JSON.stringify({ stateDir, pids: [...new Set([...holder.pids, ...pids])] } satisfies NodeLockHolder));
}

/** Releases the lock when the node in `stateDir` holds it (after its teardown); anyone else's stays. */
export async function releaseNodeLock(stateDir: string, lockFile: string = NODE_LOCK_FILE): Promise<void> {
  const holder = await nodeLockHolder(lockFile);
  if (holder?.stateDir !== stateDir) return;
  await rm(lockFile, { force: true });
  // Nothing of a stopped node stays on the host, its lock's directory included (kept while another lock is in it).
  await rmdir(dirname(lockFile)).catch(() => undefined);
}
