import type * as k8s from '@kubernetes/client-node';
import { createLogger } from '@metal-l2/kube';
import { startIpamController, type IpamControllerOptions, type RunningIpamController } from '../../src/start.js';

/**
 * Runs the IPAM controller in this process against the test control plane, watching one
 * namespace (so test files do not act on each other's claims), or every namespace (undefined: on a
 * file's private control plane only). Logs go nowhere unless METAL_L2_TEST_LOG is set.
 */
export async function runController(
  kc: k8s.KubeConfig,
  namespace: string | undefined,
  extra: Partial<
    Pick<
      IpamControllerOptions,
      'webhook' | 'concurrency' | 'cacheClient' | 'statusBudgetBytes' | 'blockSize' | 'metrics' | 'events' | 'vrf'
    >
  > = {},
): Promise<RunningIpamController> {
  const logger = createLogger({
    level: process.env['METAL_L2_TEST_LOG'] ?? 'error',
    silent: process.env['METAL_L2_TEST_LOG'] === undefined,
  });
  return startIpamController({
    kubeConfig: kc,
    ...(namespace === undefined ? {} : { namespace }),
    logger,
    leaderElection: false,
    concurrency: 4,
    ...extra,
  });
}
