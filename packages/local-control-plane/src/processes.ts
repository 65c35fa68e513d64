import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';

export interface SpawnedProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** How it was started, so it can be started again the same way (restartProcess). */
  readonly command: string;
  readonly args: readonly string[];
}

/**
 * Starts a long-lived process in its own process group with stdout and stderr in a log file,
 * detached so that it can outlive the Node process that started it (`cluster:up`).
 */
export function spawnLogged(options: { name: string; command: string; args: readonly string[]; logFile: string }): SpawnedProcess {
  const fd = openSync(options.logFile, 'a');
  try {
    const child = spawn(options.command, options.args, { detached: true, stdio: ['ignore', fd, fd] });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${options.name} (${options.command})`);
    return { name: options.name, pid: child.pid, logFile: options.logFile, command: options.command, args: options.args };
  } finally {
    closeSync(fd);
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err: unknown) {
    // EPERM means it exists but belongs to someone else: still alive.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed process whose parent is gone may linger as a zombie when nothing reaps it.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** SIGTERM to the process group, then SIGKILL once the deadline passes. */
export async function stopProcess(pid: number, options: { graceMs?: number } = {}): Promise<void> {
  const graceMs = options.graceMs ?? 10_000;
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-pid, signal);
    } catch {
      try {
        process.kill(pid, signal);
      } catch {
        // already gone
      }
    }
  };
  if (!isAlive(pid)) return;
  signalGroup('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && Date.now() < deadline) await delay(50);
  if (isAlive(pid)) signalGroup('SIGKILL');
  const killDeadline = Date.now() + 5_000;
  while (isAlive(pid) && Date.now() < killDeadline) await delay(50);
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
