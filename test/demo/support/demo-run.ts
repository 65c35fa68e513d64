import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { repoRoot } from '@metal-l2/test-support/paths';

// What both demo suites (processes, and pods on a node) run and check: the demo as a user runs it,
// with its state in a directory of the test's own (METAL_L2_LOCAL), and the same end state.

const run = promisify(execFile);

/** The demo's machines, one or two per network mode; fc-0 is Flatcar (bootstrap format ignition). */
export const MACHINES = ['l3-0', 'hb-0', 'hb-1', 'hy-0', 'l2b-0', 'l2i-0', 'fc-0'];

export interface DemoState {
  readonly mode?: string;
  readonly processes?: readonly { readonly name: string; readonly pid: number; readonly script: string }[];
  readonly release?: { readonly name: string; readonly namespace: string };
}

/** `node hack/<script> ...args` with the demo's state under `local`; resolves with its stdout. */
export async function runDemoScript(local: string, script: 'demo.js' | 'demo-down.js', args: readonly string[] = []): Promise<string> {
  const { stdout } = await run(process.execPath, [join(repoRoot, 'hack', script), ...args], {
    env: { ...process.env, METAL_L2_LOCAL: local },
    cwd: repoRoot,
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

export async function readDemoState(local: string): Promise<DemoState> {
  return JSON.parse(await readFile(join(local, 'demo', 'state.json'), 'utf8')) as DemoState;
}

/** Running, not merely a zombie waiting for init to reap it (kill(pid, 0) succeeds on those). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The table says every machine is Ready, and so does the API server. */
export async function expectEveryMachineReady(stdout: string, kubeconfig: string): Promise<void> {
  for (const machine of MACHINES) expect(stdout).toMatch(new RegExp(`^\\s*${machine}\\s.*\\sTrue\\s*$`, 'm'));
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const list = (await kc.makeApiClient(k8s.CustomObjectsApi).listNamespacedCustomObject({
    group: 'network.metal.x-k8s.io',
    version: 'v1alpha1',
    namespace: 'demo',
    plural: 'machinenetworks',
  })) as { items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[] };
  const ready = list.items
    .filter((mn) => mn.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((mn) => mn.metadata.name);
  expect(ready.sort()).toEqual([...MACHINES].sort());
  // The Flatcar machine's bootstrap data stayed Ignition, with our unit added to CABPK's.
  const secret = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedSecret({ name: 'fc-0-bootstrap', namespace: 'demo' });
  const field = (key: string): string => Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
  expect(field('format')).toBe('ignition');
  const units = (JSON.parse(field('value')) as { systemd?: { units?: { name: string }[] } }).systemd?.units?.map((u) => u.name);
  expect(units).toEqual(expect.arrayContaining(['kubeadm.service', 'metal-l2.service']));
  expect(stdout).toMatch(
    /^\s*fc-0 \(Flatcar, bootstrap format ignition\): CABPK v1\.7\.9's Ignition 2\.3\.0 stays Ignition 2\.3\.0; ours added: .*unit metal-l2\.service/m,
  );
}
