import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig, testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { installCrds, projectCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects, claimObject, kinds, poolObject } from '@metal-l2/test-support/objects';
import { repoRoot } from '@metal-l2/test-support/paths';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';

// The binary's /metrics and /readyz, as Prometheus and the kubelet would read them.
const kc = loadKubeConfig();
const objects = new Objects(kc);
let ns = '';
let child: ChildProcess | undefined;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (address !== null && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

beforeAll(async () => {
  await installCrds(kc, [...(await upstreamCrds('capiV1_14')), ...(await projectCrds())]);
  ns = await createTestNamespace(kc, 'ipam-metrics');
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await deleteTestNamespace(kc, ns);
});

describe('metrics and probes', () => {
  test('/readyz turns ready, and /metrics shows pool addresses and allocations', async () => {
    const [metricsPort, probePort] = [await freePort(), await freePort()];
    child = spawn(
      process.execPath,
      [
        join(repoRoot, 'packages', 'ipam-controller', 'dist', 'main.js'),
        '--kubeconfig',
        testKubeconfigPath(),
        '--namespace',
        ns,
        '--leader-elect=false',
        '--webhook-port',
        '0',
        '--log-level',
        'warn',
        '--metrics-bind-address',
        `127.0.0.1:${metricsPort}`,
        '--health-probe-bind-address',
        `127.0.0.1:${probePort}`,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    await waitFor('/readyz', async () => (await fetch(`http://127.0.0.1:${probePort}/readyz`).catch(() => undefined))?.ok === true, {
      timeoutMs: timeouts.claimBound,
    });
    await objects.create(kinds.pool, poolObject('watched', { addresses: ['10.95.0.10-10.95.0.19'], prefix: 24 }, ns));
    for (const n of ['m-1', 'm-2', 'm-3']) await objects.create(kinds.claim(), claimObject(n, ns, { pool: 'watched' }));
    const labels = `kind="InClusterIPPool",namespace="${ns}",pool="watched"`;
    const text = await waitFor(
      'three used addresses in /metrics',
      async () => {
        const body = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        return body.includes(`metal_l2_ipam_pool_addresses{${labels},state="used"} 3`) ? body : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    expect(text).toContain(`metal_l2_ipam_pool_addresses{${labels},state="free"} 7`);
    expect(text).toMatch(/metal_l2_ipam_allocations_total\{kind="InClusterIPPool"\} 3/);
  });
});
