export { resolveBinaries, BINARY_NAMES } from './binaries.js';
export type { Binaries, BinaryName } from './binaries.js';
export { freePort } from './free-port.js';
export { startControlPlane, stopControlPlane, readControlPlaneState, isRunning, restartProcess } from './control-plane.js';
export type { ControlPlaneState, StartOptions, NodeAccess, StopResult } from './control-plane.js';
export { startNodeCluster, resolveNodeBinaries, NODE_BINARY_NAMES } from './node.js';
export type { NodeClusterState, NodeBinaries, StartNodeOptions } from './node.js';
export { nodeLayout, NODE_NAME } from './node-layout.js';
export type { NodeLayout } from './node-layout.js';
export { mountsUnder, nodeLeftovers } from './node-teardown.js';
export { importOciLayout, imageDigest } from './node-images.js';
export { nodeLockHolder } from './node-lock.js';
export type { NodeLockHolder } from './node-lock.js';
export {
  IMAGE_REPOSITORY,
  RELEASE,
  RELEASE_NAMESPACE,
  controllerDeployments,
  deploymentAvailable,
  importImage,
  installRelease,
  readBuiltImage,
  uninstallRelease,
  userValueFlags,
  waitReleaseReady,
} from './release.js';
export type { BuiltImage, DeploymentView, InstallOptions, ReleaseTools, UserValues } from './release.js';
export { renderKubeconfig } from './kubeconfig.js';
export type { AdminCredentials } from './kubeconfig.js';
export { isAlive, stopProcess } from './processes.js';
export { sweepOrphanedControlPlanes, startOwnedControlPlane } from './owned-control-planes.js';
export type { OwnedControlPlane } from './owned-control-planes.js';
