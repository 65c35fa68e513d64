// Plain JavaScript: jest loads global setup outside its module mapper, so this imports the built
// @metal-l2/local-control-plane (npm test builds first).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startOwnedControlPlane, sweepOrphanedControlPlanes } from '@metal-l2/local-control-plane';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const parentDir = join(repoRoot, '.local', 'test-clusters');

/**
 * One control plane per test run, reached by every integration test file through the environment
 * (workers inherit it). `npm test` (hack/test-stages.js) starts it once for the core and system
 * stages and passes it in METAL_L2_TEST_*: then this does nothing. A jest run on its own (one
 * file, one project) starts its own here, and the global teardown stops it.
 */
export default async function globalSetup() {
  if (process.env.METAL_L2_TEST_KUBECONFIG !== undefined) return;
  await sweepOrphanedControlPlanes(parentDir);
  const { state, stateDir, binDir } = await startOwnedControlPlane({ repoRoot, parentDir, label: 'run' });
  process.env.METAL_L2_TEST_KUBECONFIG = state.kubeconfig;
  process.env.METAL_L2_TEST_STATE_DIR = stateDir;
  process.env.METAL_L2_TEST_BIN_DIR = binDir;
  // Only what this setup started is stopped by the teardown (same process).
  process.env.METAL_L2_TEST_STARTED_BY_JEST = stateDir;
  process.stderr.write(`\ncontrol plane for this run: ${state.server}; logs in ${state.logDir}\n`);
}
