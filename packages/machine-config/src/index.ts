// The public surface of @metal-l2/machine-config: a machine's ports, VLANs and addresses → OS network
// files, the boot script that applies them, a control plane's endpoint announcer (keepalived), and the
// injection into cloud-config and Ignition bootstrap data. Pure.
export { RENDERER_NAMES } from './types.js';
export type {
  BootPort,
  MachineNetworkConfig,
  Nameservers,
  NetworkAddress,
  NetworkRoute,
  PortConfig,
  RenderedFile,
  RenderedNetwork,
  RendererName,
  VlanConfig,
} from './types.js';

export { renderMachineNetwork } from './render.js';
export type { RenderOutcome } from './render.js';

export { ConfigIssueCode, validateMachineNetworkConfig, validatePorts } from './validate.js';
export type { ConfigIssue } from './validate.js';

export { PLACEHOLDER_PATTERN, isBondPort, networkFilePlaceholder, portPlaceholder } from './topology.js';

export { IFUPDOWN_FILE, IFUPDOWN_SOURCE_LINE } from './ifupdown.js';
export { NETPLAN_FILE } from './netplan.js';
export { NETWORKD_DIR } from './networkd.js';

export { BOOT_COMMAND, BOOT_CONFIG_PATH, BOOT_SCRIPT, BOOT_SCRIPT_PATH, UserStateCode } from './boot-script.js';

export { MERGE_HOW, renderCloudConfigPart, toBootConfig } from './cloud-config.js';
export type { BootConfig } from './cloud-config.js';

export { MARKER_HEADER } from './envelope.js';

export {
  IGNITION_DONE_PATH,
  IGNITION_MARKER_PATH,
  IGNITION_SPEC_VERSIONS,
  IGNITION_STEP_PATH,
  IGNITION_UNIT,
  IGNITION_UNIT_CONTENTS,
  KUBEADM_UNIT,
} from './ignition.js';

export { FORBIDDEN_IN_PART, InjectRefusalReason, extractOriginal, injectUserData, injectionHash, readInjectionHash } from './inject.js';
export type { InjectOutcome, InjectUserDataInput } from './inject.js';

export { RENDERER_VERSION, networkFingerprint } from './fingerprint.js';
export type { AnnouncedEndpoint, InjectedContent } from './fingerprint.js';

export { AnnouncerIssueCode, DEFAULT_ADVERT_INTERVAL_SEC, renderEndpointAnnouncer } from './endpoint-announcer.js';
export type { AnnouncerIssue, AnnouncerOutcome, EndpointAnnouncerInput, RenderedAnnouncer } from './endpoint-announcer.js';
export {
  ANNOUNCER_COMMANDS,
  APISERVER_CHECK_PATH,
  ENDPOINT_STATE_PATH,
  KEEPALIVED_CONF_PATH,
  NOTIFY_SCRIPT_PATH,
  VRRP_INSTANCE,
  VRRP_SCRIPT,
} from './keepalived.js';
export {
  ANNOUNCER_CONTAINER,
  ANNOUNCER_CTR_NAMESPACE,
  ENDPOINT_UNIT,
  IMAGE_KEEPALIVED,
  announcerImageIssue,
  renderEndpointUnit,
} from './announcer-unit.js';
