// Plain JavaScript: jest loads global setup outside its module mapper, so this imports the built
// @metal-l2/local-control-plane (npm test builds first).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOwnedControlPlane, sweepOrphanedControlPlanes } from '@metal-l2/local-control-plane';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const parentDir = join(repoRoot, '.local', 'test-clusters');

/**
 * One control plane per test run: started here, reached by every integration test file through
 * the environment (workers inherit it), stopped by the global teardown.
 */
export default async function globalSetup() {
  await sweepOrphanedControlPlanes(parentDir);
  const { state, stateDir, binDir } = await startOwnedControlPlane({ repoRoot, parentDir, label: 'run' });
  process.env.METAL_L2_TEST_KUBECONFIG = state.kubeconfig;
  process.env.METAL_L2_TEST_STATE_DIR = stateDir;
  process.env.METAL_L2_TEST_BIN_DIR = binDir;
  process.stderr.write(`\ncontrol plane for this run: ${state.server}; logs in ${state.logDir}\n`);
}
