// The Metal side of VRF-backed pools: what the pool reconciler calls, and what main wires.
export { reconcileVrf } from './reconcile-vrf.js';
export type { ReconcileVrfInput, VrfOutcome } from './reconcile-vrf.js';
export { deleteVrfResources } from './delete-vrf.js';
export type { VrfDeletion } from './delete-vrf.js';
export type { VrfEvent } from './vrf-scope.js';
export { createVrfRuntime, DEFAULT_VRF_RESYNC_MS } from './vrf-runtime.js';
export type { VrfRuntime, VrfRuntimeOptions } from './vrf-runtime.js';
export type { MetalSettings } from '@metal-l2/metal-api';
export { reservedAddressesOf } from './vrf-status.js';
export { credentialsSecretKey } from './credentials.js';
export { isSubnetInRanges, parseCidrRange, poolSubnet, reservationSizeProblem } from './subnet.js';
