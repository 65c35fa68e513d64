import { join } from 'node:path';
import { startOwnedControlPlane, stopControlPlane, type OwnedControlPlane } from '@metal-l2/local-control-plane';
import { repoRoot } from './paths.js';

export const testClustersDir = join(repoRoot, '.local', 'test-clusters');

/**
 * A second control plane for a test file that needs CRDs the shared one cannot hold at the same
 * time (CAPI v1.7.9 serves IPAM v1beta1 only). Stop it in afterAll with `stopPrivateControlPlane`.
 */
export async function startPrivateControlPlane(
  label: string,
  options: { extraApiServerArgs?: readonly string[] } = {},
): Promise<OwnedControlPlane> {
  return startOwnedControlPlane({ repoRoot, parentDir: testClustersDir, label, ...options });
}

export async function stopPrivateControlPlane(plane: OwnedControlPlane | undefined): Promise<void> {
  if (plane !== undefined) await stopControlPlane(plane.stateDir);
}
