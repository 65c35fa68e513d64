import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type * as k8s from '@kubernetes/client-node';
import { restartProcess, type OwnedControlPlane } from '@metal-l2/local-control-plane';
import { createTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, projectCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects, kinds, poolObject } from '@metal-l2/test-support/objects';
import { startPrivateControlPlane, stopPrivateControlPlane } from '@metal-l2/test-support/test-control-planes';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import type { RunningIpamController } from '../src/start.js';
import { createClaims } from './support/claims.js';
import { runController } from './support/running-controller.js';

// DESIGN §5 reliability: the API server restarts under a running controller in the middle of a
// burst. Its watches break, it relists, and every claim still ends bound exactly once. On a private
// control plane, since the restart would disturb every other test file.
let plane: OwnedControlPlane | undefined;
let kc: k8s.KubeConfig;
let objects: Objects;
let controller: RunningIpamController | undefined;
let ns = '';

beforeAll(async () => {
  plane = await startPrivateControlPlane('apiserver-restart');
  kc = loadKubeConfig(plane.state.kubeconfig);
  objects = new Objects(kc);
  await installCrds(kc, [...(await upstreamCrds('capiV1_14')), ...(await projectCrds())]);
  ns = await createTestNamespace(kc, 'ipam-restart');
  controller = await runController(kc, ns);
});
afterAll(async () => {
  await controller?.stop();
  await stopPrivateControlPlane(plane);
});

describe('API server restart', () => {
  test('a burst split by an API server restart ends with every claim bound once', async () => {
    await objects.create(kinds.pool, poolObject('restart', { addresses: ['10.90.0.0/23'], prefix: 23 }, ns));
    await createClaims({ objects, namespace: ns }, { pool: 'restart', prefix: 'r', to: 150 });
    await waitFor('the first claims bound', async () => (await objects.list(kinds.address(), ns)).length > 0, {
      timeoutMs: timeouts.claimBound,
    });
    await restartProcess(plane?.stateDir ?? '', 'kube-apiserver');
    await createClaims({ objects, namespace: ns }, { pool: 'restart', prefix: 'r', from: 150, to: 300 });
    const addresses = await waitFor(
      'all 300 claims bound',
      async () => {
        const all = await objects.list(kinds.address(), ns);
        const bound = (await objects.list(kinds.claim(), ns)).filter((c) => c.status?.addressRef?.name !== undefined);
        return all.length === 300 && bound.length === 300 ? all.map((a) => a.spec.address as string) : undefined;
      },
      { timeoutMs: timeouts.burstBound, intervalMs: 500 },
    );
    expect(new Set(addresses).size).toBe(300);
    const allocations = (await objects.get(kinds.pool, 'restart', ns))?.status?.allocations as Record<string, string>;
    expect(Object.keys(allocations)).toHaveLength(300);
  });
});
