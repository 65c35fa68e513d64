import { describe, expect, test } from '@jest/globals';
import { claimObject, kinds, poolObject } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { ControllerProcess, freePort } from '@metal-l2/test-support/controller-process';
import { useIpamNamespace } from './support/ipam-namespace.js';

// The binary's /metrics and /readyz, as Prometheus and the kubelet would read them.
const space = useIpamNamespace('ipam-metrics');
const { objects } = space;

describe('metrics and probes', () => {
  test('/readyz turns ready, and /metrics shows pool addresses and allocations', async () => {
    const [metricsPort, probePort] = [await freePort(), await freePort()];
    const controller = space.stopAfterAll(
      ControllerProcess.start({ kubeconfig: space.kubeconfigPath, namespace: space.ns, metricsPort, probePort }),
    );
    await controller.ready();
    await objects.create(kinds.pool, poolObject('watched', { addresses: ['10.95.0.10-10.95.0.19'], prefix: 24 }, space.ns));
    for (const n of ['m-1', 'm-2', 'm-3']) await objects.create(kinds.claim(), claimObject(n, space.ns, { pool: 'watched' }));
    const labels = `kind="InClusterIPPool",namespace="${space.ns}",pool="watched"`;
    const text = await waitFor(
      'three used addresses in /metrics',
      async () => {
        const body = await controller.metricsText();
        return body.includes(`metal_l2_ipam_pool_addresses{${labels},state="used"} 3`) ? body : undefined;
      },
      { timeoutMs: timeouts.claimBound },
    );
    expect(text).toContain(`metal_l2_ipam_pool_addresses{${labels},state="free"} 7`);
    expect(text).toMatch(/metal_l2_ipam_allocations_total\{kind="InClusterIPPool"\} 3/);
  });
});
