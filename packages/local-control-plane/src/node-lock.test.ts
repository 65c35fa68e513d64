import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { acquireNodeLock, nodeLockHolder, recordNodeLockPids, releaseNodeLock } from './node-lock.js';

// The lock that keeps a second node (another jest worker's suite, a `cluster:up -- --node`) off a
// machine where one runs, on a lock file of this test's own (the real one is host-wide).

let dir = '';
let lockFile = '';

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'metal-l2-node-lock-'));
  lockFile = join(dir, 'run', 'node.lock');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('node lock', () => {
  test('a second node fails at once, naming the first; after the release it gets the lock', async () => {
    await acquireNodeLock('/state/first', { waitMs: 0, lockFile });
    await expect(acquireNodeLock('/state/second', { waitMs: 0, lockFile })).rejects.toThrow(/another node runs .*\/state\/first/);
    await releaseNodeLock('/state/first', lockFile);
    expect(existsSync(dirname(lockFile))).toBe(false);
    await acquireNodeLock('/state/second', { waitMs: 0, lockFile });
    expect((await nodeLockHolder(lockFile))?.stateDir).toBe('/state/second');
  });

  test('a waiting start gets the lock once the holder releases it', async () => {
    await acquireNodeLock('/state/first', { waitMs: 0, lockFile });
    const waiting = acquireNodeLock('/state/second', { waitMs: 30_000, lockFile });
    let settled = false;
    void waiting.then(() => (settled = true));
    // Still waiting while the first holds it: the holder is this (live) process.
    await expect(acquireNodeLock('/state/third', { waitMs: 0, lockFile })).rejects.toThrow(/\/state\/first/);
    expect(settled).toBe(false);
    await releaseNodeLock('/state/first', lockFile);
    await waiting;
    expect((await nodeLockHolder(lockFile))?.stateDir).toBe('/state/second');
  });

  test('a release by a node that does not hold the lock leaves it', async () => {
    await acquireNodeLock('/state/first', { waitMs: 0, lockFile });
    await releaseNodeLock('/state/other', lockFile);
    expect((await nodeLockHolder(lockFile))?.stateDir).toBe('/state/first');
  });

  test('the node processes keep it held after the starter exits; a holder with none alive is taken over', async () => {
    const starter = deadPid();
    await acquireNodeLock('/state/first', { waitMs: 0, lockFile });
    await writeFile(lockFile, JSON.stringify({ stateDir: '/state/first', pids: [starter] }));
    await recordNodeLockPids('/state/first', [process.pid], lockFile);
    expect((await nodeLockHolder(lockFile))?.pids).toEqual([starter, process.pid]);
    await expect(acquireNodeLock('/state/second', { waitMs: 0, lockFile })).rejects.toThrow(/\/state\/first/);

    await writeFile(lockFile, JSON.stringify({ stateDir: '/state/first', pids: [starter] }));
    await acquireNodeLock('/state/second', { waitMs: 0, lockFile });
    expect(await nodeLockHolder(lockFile)).toEqual({ stateDir: '/state/second', pids: [process.pid] });
  });
});
