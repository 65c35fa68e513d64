// @metal-l2/network-controller: MachineNetworks for Cluster API Provider Packet machines.
export { createNetworkController, addToManager, startNetworkController, DEFAULT_TIMINGS } from './start.js';
export type { NetworkControllerOptions, NetworkRunnables, RunningNetworkController } from './start.js';
export { parseFlags, usage, DEFAULT_METADATA_URL } from './options.js';
export type { NetworkFlags } from './options.js';
export { templateNameFor, resolveTemplateName, templateLinkOf } from './template-link.js';
export { claimName, wantedClaims } from './machine-network/claim-names.js';
export { MACHINE_NETWORK_LABEL } from './context.js';
export type { NetworkTimings } from './context.js';
