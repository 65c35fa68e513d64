import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { OwnedControlPlane } from '@metal-l2/local-control-plane';
import { startPrivateControlPlane, stopPrivateControlPlane } from '@metal-l2/test-support/test-control-planes';
import { alive, expectEveryMachineReady, readDemoState, runDemoScript } from './support/demo-run.js';

// The README's first command ends in hack/demo.js: run it as a user would (its own state directory
// through METAL_L2_LOCAL, on a control plane of its own, since the demo registers cluster-wide
// webhooks), then `demo:down`. Nothing else runs the demo, so this is what keeps the quick start true.
describe('npm run demo', () => {
  let plane: OwnedControlPlane | undefined;
  let local = '';

  beforeAll(async () => {
    plane = await startPrivateControlPlane('demo');
    local = await mkdtemp(join(tmpdir(), 'metal-l2-demo-'));
    await mkdir(join(local, 'bin'));
    await symlink(join(plane.binDir, 'kubectl'), join(local, 'bin', 'kubectl'));
    await symlink(plane.state.kubeconfig, join(local, 'kubeconfig'));
  });
  afterAll(async () => {
    // Stops whatever a failed demo left running; harmless after a clean demo:down.
    await runDemoScript(local, 'demo-down.js', ['--keep-cluster']).catch(() => undefined);
    await stopPrivateControlPlane(plane);
    if (local !== '') await rm(local, { recursive: true, force: true });
  });

  test('brings every mode to Ready, prints the table, and demo:down stops what it started', async () => {
    const stdout = await runDemoScript(local, 'demo.js');
    await expectEveryMachineReady(stdout, join(local, 'kubeconfig'));

    const state = await readDemoState(local);
    const pids = (state.processes ?? []).map((p) => p.pid);
    expect(pids.length).toBe(4); // simulator, both controllers, the CAPP fixture
    expect(pids.every(alive)).toBe(true);

    await runDemoScript(local, 'demo-down.js', ['--keep-cluster']);
    expect(pids.filter(alive)).toEqual([]);
  }, 300_000);
});
