// What only the system stage runs (the real Cluster API and CAPP managers, the node's programs,
// containerd) is built by .ci/run in the background, at the lowest CPU priority, while the checks,
// the unit and the core stages run: on a cold machine those Go builds are most of the install, and
// the core stage mostly waits. .ci/run writes the builder's pid to .local/system-builds.pid and,
// when it ends, its exit status and duration to .local/system-builds.status; the system stage waits
// for that here. A run that .ci/run did not start (no pid file) waits for nothing, and the tests
// build what is missing themselves, as they always did.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive } from '@metal-l2/local-control-plane';

/** @param {string} root */
function backgroundBuildFiles(root) {
  const dir = join(root, '.local');
  return {
    pid: join(dir, 'system-builds.pid'),
    status: join(dir, 'system-builds.status'),
    log: join(dir, 'system-builds.log'),
  };
}

/**
 * Waits (up to `timeoutMs`) for the background builds .ci/run started.
 * @param {string} root
 * @param {number} timeoutMs
 * @returns {Promise<{ ok: true; message: string | undefined } | { ok: false; message: string }>}
 */
export async function awaitBackgroundBuilds(root, timeoutMs) {
  const files = backgroundBuildFiles(root);
  if (!existsSync(files.pid)) return { ok: true, message: undefined };
  const pid = Number(readFileSync(files.pid, 'utf8').trim());
  const started = Date.now();
  while (!existsSync(files.status)) {
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid))
      return { ok: false, message: `the background builds (pid ${pid}) ended without a status; see ${files.log}` };
    if (Date.now() - started > timeoutMs)
      return { ok: false, message: `the background builds (pid ${pid}) did not end within ${timeoutMs / 1000} s; see ${files.log}` };
    await sleep(2_000);
  }
  const [code = '', took = '?'] = readFileSync(files.status, 'utf8').trim().split(/\s+/);
  const waited = Math.round((Date.now() - started) / 1000);
  if (code !== '0') {
    const tail = readFileSync(files.log, 'utf8').split('\n').slice(-30).join('\n');
    return { ok: false, message: `the background builds failed (exit ${code}) after ${took} s; the end of ${files.log}:\n${tail}` };
  }
  return { ok: true, message: `the system stage's background builds took ${took} s; the system stage waited ${waited} s for them` };
}
