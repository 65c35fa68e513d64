import { stopControlPlane } from '@metal-l2/local-control-plane';

/** Stops the control plane the global setup started (none when hack/test-stages.js passed one in). */
export default async function globalTeardown() {
  const stateDir = process.env.METAL_L2_TEST_STARTED_BY_JEST;
  if (stateDir && process.env.METAL_L2_KEEP_CONTROL_PLANE !== '1') await stopControlPlane(stateDir);
}
