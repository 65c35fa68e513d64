import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import type { OwnedControlPlane } from '@metal-l2/local-control-plane';
import { repoRoot } from '@metal-l2/test-support/paths';
import { startPrivateControlPlane, stopPrivateControlPlane } from '@metal-l2/test-support/test-control-planes';

const run = promisify(execFile);
const MODES = ['l3-0', 'hb-0', 'hb-1', 'hy-0', 'l2b-0', 'l2i-0'];

interface DemoState {
  readonly processes?: readonly { readonly name: string; readonly pid: number }[];
}

/** Running, not merely a zombie waiting for init to reap it (kill(pid, 0) succeeds on those). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

// The README's first command ends in hack/demo.js: run it as a user would (its own state directory
// through METAL_L2_LOCAL, on a control plane of its own, since the demo registers cluster-wide
// webhooks), then `demo:down`. Nothing else runs the demo, so this is what keeps the quick start true.
describe('npm run demo', () => {
  let plane: OwnedControlPlane | undefined;
  let local = '';
  let env: NodeJS.ProcessEnv = {};

  beforeAll(async () => {
    plane = await startPrivateControlPlane('demo');
    local = await mkdtemp(join(tmpdir(), 'metal-l2-demo-'));
    await mkdir(join(local, 'bin'));
    await symlink(join(plane.binDir, 'kubectl'), join(local, 'bin', 'kubectl'));
    await symlink(plane.state.kubeconfig, join(local, 'kubeconfig'));
    env = { ...process.env, METAL_L2_LOCAL: local };
  });
  afterAll(async () => {
    // Stops whatever a failed demo left running; harmless after a clean demo:down.
    await run(process.execPath, [join(repoRoot, 'hack', 'demo-down.js'), '--keep-cluster'], { env }).catch(() => undefined);
    await stopPrivateControlPlane(plane);
    if (local !== '') await rm(local, { recursive: true, force: true });
  });

  test('brings every mode to Ready, prints the table, and demo:down stops what it started', async () => {
    const demo = await run(process.execPath, [join(repoRoot, 'hack', 'demo.js')], {
      env,
      cwd: repoRoot,
      maxBuffer: 16 * 1024 * 1024,
    });
    for (const machine of MODES) expect(demo.stdout).toMatch(new RegExp(`^\\s*${machine}\\s.*\\sTrue\\s*$`, 'm'));

    // What the table says, read back from the API server itself.
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(join(local, 'kubeconfig'));
    const list = (await kc.makeApiClient(k8s.CustomObjectsApi).listNamespacedCustomObject({
      group: 'network.metal.x-k8s.io',
      version: 'v1alpha1',
      namespace: 'demo',
      plural: 'machinenetworks',
    })) as { items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[] };
    const ready = list.items
      .filter((mn) => mn.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .map((mn) => mn.metadata.name);
    expect(ready.sort()).toEqual([...MODES].sort());

    const state = JSON.parse(await readFile(join(local, 'demo', 'state.json'), 'utf8')) as DemoState;
    const pids = (state.processes ?? []).map((p) => p.pid);
    expect(pids.length).toBe(4); // simulator, both controllers, the CAPP fixture
    expect(pids.every(alive)).toBe(true);

    await run(process.execPath, [join(repoRoot, 'hack', 'demo-down.js'), '--keep-cluster'], { env });
    expect(pids.filter(alive)).toEqual([]);
  }, 300_000);
});
