import { stopControlPlane } from '@metal-l2/local-control-plane';

export default async function globalTeardown() {
  const stateDir = process.env.METAL_L2_TEST_STATE_DIR;
  if (stateDir && process.env.METAL_L2_KEEP_CONTROL_PLANE !== '1') await stopControlPlane(stateDir);
}
