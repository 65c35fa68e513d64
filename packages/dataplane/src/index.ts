// @metal-l2/dataplane (test only): the simulated top-of-rack switch and the QEMU guest harness of
// the data-plane suite.

export { forwardFrame, ingressSegment, egressVid, PUBLIC_SEGMENT } from './switch/forwarding.js';
export type { Segment, SwitchPortConfig, Ingress, Egress } from './switch/forwarding.js';
export { switchPortConfig } from './switch/port-state.js';
export type { MetalNetworkState, MetalPortState, PortConfig } from './switch/port-state.js';
export { TorSwitch } from './switch/tor-switch.js';
export type { TorSwitchOptions, PortStateFeed, PortCounters } from './switch/tor-switch.js';
export { ensureGuestImage, defaultCacheRoot, recipeHash, RECIPE_DIR } from './guest-image.js';
export type { GuestImage, GuestImageOptions } from './guest-image.js';
export { Guest, MANAGEMENT_NIC } from './guest.js';
export type { GuestNic, GuestOptions, GuestOs } from './guest.js';
export { GuestAgent } from './guest-agent.js';
export type { CommandResult } from './guest-agent.js';
export { MetadataForwarder, GUEST_METADATA_URL, GUEST_SEED_URL, GUEST_METADATA_HOST } from './metadata-forwarder.js';
export type { MetadataForwarderOptions, ForwardedRequest } from './metadata-forwarder.js';
export { ignitionInitrd, seedIgnitionRoot } from './ignition-root.js';
export type { IgnitionInitrd, IgnitionInitrdOptions } from './ignition-root.js';
