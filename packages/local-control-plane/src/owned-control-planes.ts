import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveBinaries } from './binaries.js';
import { readControlPlaneState, startControlPlane, stopControlPlane, type ControlPlaneState } from './control-plane.js';
import { isAlive } from './processes.js';

/**
 * Control planes owned by a process (a jest run, a test file that needs other CRD versions) live
 * in their own directories under one parent, so a later run can find and stop the ones whose
 * owner died without touching those of runs still going.
 */
export async function sweepOrphanedControlPlanes(parentDir: string): Promise<void> {
  await mkdir(parentDir, { recursive: true });
  for (const entry of await readdir(parentDir)) {
    const dir = join(parentDir, entry);
    const state = await readControlPlaneState(dir);
    if (state?.ownerPid === undefined || !isAlive(state.ownerPid)) await stopControlPlane(dir);
  }
}

export interface OwnedControlPlane {
  readonly state: ControlPlaneState;
  readonly stateDir: string;
  readonly binDir: string;
}

/** Starts a control plane owned by this process in a fresh directory under `parentDir`. */
export async function startOwnedControlPlane(options: {
  repoRoot: string;
  parentDir: string;
  label: string;
  extraApiServerArgs?: readonly string[];
}): Promise<OwnedControlPlane> {
  const binaries = await resolveBinaries(options.repoRoot);
  const stateDir = join(options.parentDir, `${options.label}-${process.pid}-${Date.now()}`);
  const state = await startControlPlane({
    binaries,
    stateDir,
    ownerPid: process.pid,
    ...(options.extraApiServerArgs === undefined ? {} : { extraApiServerArgs: options.extraApiServerArgs }),
  });
  return { state, stateDir, binDir: binaries.dir };
}
