// @metal-l2/network-controller: MachineNetworks for Cluster API Provider Packet machines.
export { createNetworkController, addToManager, startNetworkController, DEFAULT_TIMINGS } from './start.js';
export type { NetworkControllerOptions, NetworkRunnables, RunningNetworkController } from './start.js';
export { parseFlags, usage, DEFAULT_METADATA_URL } from './options.js';
export type { NetworkFlags } from './options.js';
export {
  templateNameFor,
  resolveTemplateName,
  templateLinkOf,
  templateNameOfPacketMachineTemplate,
  PACKET_MACHINE_TEMPLATE_GROUP_KIND,
} from './template-link.js';
export type { TemplateLink, PacketMachineTemplateLookup, AsyncPacketMachineTemplateLookup } from './template-link.js';
export { NetworkWebhookPaths } from './webhook/paths.js';
export { packetMachineAdmissionHandler, decidePause, DEFAULT_TEMPLATE_READ_TIMEOUT_MS } from './webhook/packet-machine-webhook.js';
export type { PacketMachineWebhookDeps, PauseDecision } from './webhook/packet-machine-webhook.js';
export { templateAdmissionHandler, formatIssues } from './webhook/template-webhook.js';
export { validateTemplate, TEMPLATE_ISSUE_CODES } from './webhook/template-validation.js';
export type { TemplateIssue, TemplateIssueCode, TemplateValidation } from './webhook/template-validation.js';
export { claimName, wantedClaims } from './machine-network/claim-names.js';
export { MACHINE_NETWORK_LABEL } from './context.js';
export type { NetworkTimings } from './context.js';
