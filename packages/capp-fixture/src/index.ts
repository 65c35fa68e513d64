// @metal-l2/capp-fixture: a dev-only stand-in for Cluster API Provider Packet v0.9.0 (and the
// owner-reference part of the CAPI v1.7 Machine controller) for tests and the demo.
export { startCappFixture } from './fixture.js';
export { cabpkCloudConfig } from './cabpk-bootstrap.js';
export { cabpkIgnition, CABPK_IGNITION_FIXTURE } from './cabpk-ignition.js';
export type { CappFixtureOptions, RunningCappFixture } from './fixture.js';
export { renderGoTemplate, goTemplateBinary, GoTemplateError, GoTemplateToolError } from './go-template.js';
export type { GoTemplateErrorCode, GoTemplateOptions } from './go-template.js';
export {
  PACKET_MACHINE_FINALIZER,
  PacketMachineConditionTypes,
  PacketMachineReasons,
  MachineFailureReasons,
  RoleTags,
} from './capp-api.js';
export { defaultCreateTags } from './device-request.js';
export { elasticIpIdentifier, enableProjectBgp, reserveClusterEndpoint } from './vip-manager.js';
