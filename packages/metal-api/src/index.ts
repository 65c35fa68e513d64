// @metal-l2/metal-api: a typed Equinix Metal API client and the network-mode port planner.

export { createMetalClient, COVERED_OPERATIONS } from './client.js';
export type { MetalCallContext, MetalClient, MetalClientOptions } from './client.js';
export { MetalClients } from './client-cache.js';
export type { MetalSettings } from './client-cache.js';

export { createTransport, apiPath, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS } from './transport.js';
export type { MetalTransport, MetalTransportOptions, MetalRequest, HttpMethod, QueryValue } from './transport.js';
export type { CallOptions, IncludeOptions } from './transport.js';

export {
  MetalApiError,
  MetalHttpError,
  MetalNetworkError,
  MetalTimeoutError,
  MetalAbortedError,
  MetalInvalidResponseError,
  METAL_API_ERROR_CODES,
  isMetalApiError,
  isMetalHttpError,
} from './errors.js';
export type { MetalApiErrorCode, MetalRequestInfo } from './errors.js';

export { DEFAULT_METAL_BACKOFF, findCause, isMetalGone, judgeMetalError, metalBackoffMs, metalErrorIn } from './retry.js';
export type { MetalBackoff, MetalErrorVerdict } from './retry.js';
export { DEFAULT_RETRY_POLICY, decideRetry, backoffDelayMs, parseRetryAfterMs } from './retry.js';
export type { RetryPolicy, RetryReason, RetryDecision, AttemptFailure } from './retry.js';
export {
  TokenBucket,
  DEFAULT_RATE_LIMIT,
  RateLimitFormatError,
  checkRateLimitOptions,
  formatRateLimit,
  parseRateLimit,
  rateLimitFlag,
} from './rate-limit.js';
export type { RateLimitOptions } from './rate-limit.js';
export { paginate, collect, hasNextPage, MAX_PAGE } from './pagination.js';
export type { Page, PageOptions } from './pagination.js';
export { DecodeProblem } from './decode.js';
export { systemTime } from './retry.js';
export type { TimeSource } from './retry.js';
export { silentLogger } from './observer.js';
export type {
  MetalLogger,
  LogFields,
  MetalApiObserver,
  AttemptFinished,
  AttemptStatus,
  RetryScheduled,
  CallFinished,
  RateLimitWaited,
} from './observer.js';
export { createPrometheusObserver, METAL_API_METRICS } from './prometheus.js';

export { DEVICE_OPERATIONS } from './devices.js';
export type { DevicesApi, DeviceListOptions, DeleteDeviceOptions } from './devices.js';
export { PORT_OPERATIONS, PORT_VLAN_INCLUDES, DEFAULT_LAYER3_REQUEST_IPS } from './ports.js';
export type { PortsApi, BondOptions, ConvertLayer2Options, ConvertLayer3Options } from './ports.js';
export { VIRTUAL_NETWORK_OPERATIONS } from './vlans.js';
export type { VirtualNetworksApi, VirtualNetworkListOptions } from './vlans.js';
export { VRF_OPERATIONS } from './vrfs.js';
export type { VrfsApi, VrfListOptions } from './vrfs.js';
export { IP_RESERVATION_OPERATIONS } from './ip-reservations.js';
export type { IPReservationsApi, IPReservationListOptions } from './ip-reservations.js';
export { METAL_GATEWAY_OPERATIONS } from './metal-gateways.js';
export type { MetalGatewaysApi } from './metal-gateways.js';

export { DEVICE_STATES, PORT_NETWORK_TYPES, VLAN_BATCH_STATES } from './types.js';
export type {
  Href,
  Meta,
  ErrorBody,
  Metro,
  Project,
  Device,
  DeviceState,
  DeviceList,
  DeviceUpdateInput,
  DeviceCreateInMetroInput,
  IPAddressRequest,
  IPAssignment,
  Event,
  EventList,
  Port,
  PortData,
  BondPortData,
  PortNetworkType,
  PortAssignInput,
  PortConvertLayer3Input,
  PortConvertLayer3RequestIp,
  PortVlanAssignment,
  PortVlanAssignmentList,
  PortVlanAssignmentBatch,
  PortVlanAssignmentBatchState,
  PortVlanAssignmentBatchList,
  PortVlanAssignmentBatchCreateInput,
  PortVlanAssignmentBatchCreateInputItem,
  VirtualNetwork,
  VirtualNetworkList,
  VirtualNetworkCreateInput,
  MetalGatewayLite,
  Vrf,
  VrfList,
  VrfCreateInput,
  IPReservation,
  VrfIpReservation,
  AnyIPReservation,
  IPReservationList,
  VrfIpReservationList,
  IPReservationRequestInput,
  VrfIpReservationCreateInput,
  IPReservationCreateInput,
  IPReservationType,
  MetalGateway,
  VrfMetalGateway,
  AnyMetalGateway,
  MetalGatewayList,
  MetalGatewayCreateInput,
  VrfMetalGatewayCreateInput,
  AnyMetalGatewayCreateInput,
} from './types.js';

export { applyPortPlan, applyPortCall, pollVlanBatch } from './ports.js';
export type { ApplyPortPlanOptions, PortPlanOutcome, PortCallStarted, VlanBatchStatus } from './ports.js';

export {
  planPortChanges,
  resolveDesired,
  describePortCall,
  deriveNetworkType,
  observePorts,
  PORT_PLAN_ISSUE_CODES,
  desiredNetworkType,
  effectivePorts,
  FOUR_PORT_ONLY,
  isBondName,
  PORT_LAYOUTS,
  portCountOf,
  portNamesOf,
  settleDefaults,
  portCelRules,
} from './port-plan/index.js';
export type {
  PortPlan,
  PortPlanInput,
  PortCall,
  PortCallTarget,
  PlannedVlanAssignment,
  DesiredPort,
  ResolveContext,
  PortPlanIssue,
  PortPlanIssueCode,
  NetworkType,
  PortShape,
  EffectivePort,
  PortCount,
  ObservedPort,
  PortSettings,
  VlanRef,
  RuleScope,
} from './port-plan/index.js';
