export { resolveBinaries, BINARY_NAMES } from './binaries.js';
export type { Binaries, BinaryName } from './binaries.js';
export { startControlPlane, stopControlPlane, readControlPlaneState, isRunning, restartProcess } from './control-plane.js';
export type { ControlPlaneState, StartOptions } from './control-plane.js';
export { renderKubeconfig } from './kubeconfig.js';
export type { AdminCredentials } from './kubeconfig.js';
export { isAlive, stopProcess } from './processes.js';
export { sweepOrphanedControlPlanes, startOwnedControlPlane } from './owned-control-planes.js';
export type { OwnedControlPlane } from './owned-control-planes.js';
