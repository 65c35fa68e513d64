// The public surface of @metal-l2/kube. Everything else is internal.
// The client's own index is already its curated surface.
export * from './client/index.js';

export { Informer, OwnWrites } from './cache/index.js';
export type { IndexFunction, InformerEventName, InformerHandle, InformerHandlers, InformerOptions, InformerStats } from './cache/index.js';
export type { CacheEvent, CacheEventType } from './cache/store.js';

export { BucketRateLimiter, ItemExponentialRateLimiter, MaxOfRateLimiter, WorkQueue, defaultControllerRateLimiter } from './queue/index.js';
export type { RateLimiter, WorkQueueHooks, WorkQueueOptions } from './queue/index.js';

export {
  Controller,
  DEFAULT_RECONCILE_TIMEOUT_MS,
  done,
  failed,
  proceed,
  requeueAfter,
  runSteps,
  soonest,
  waitFor,
} from './controller/index.js';
export type {
  ControllerOptions,
  ControllerWatchOptions,
  EventMapper,
  Phase,
  ReconcileContext,
  ReconcileResult,
  Reconciler,
  Step,
  StepOutcome,
} from './controller/index.js';

export {
  KubeApiError,
  TerminalError,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isKubeApiError,
  isNotFound,
  isTerminalError,
  terminalErrorIn,
  isTimeout,
  isTooManyRequests,
  toKubeApiError,
} from './errors.js';
export type { KubeApiErrorReason, StatusCause } from './errors.js';

export { apiVersionOf, builtinTypes, keyOf, keyString, parseKey, withVersion } from './resource.js';
export type { KubeObject, ObjectKey, ObjectMeta, ResourceType } from './resource.js';

export { formatTime, getCondition, isFalse, isTrue, readyCondition, removeCondition, setCondition, setConditions } from './conditions.js';
export type { Condition, ConditionInput, ConditionStatus } from './conditions.js';

export { PatchHelper, createMergePatch, jsonEqual, objectPatch, patchStatusIfChanged, statusPatch } from './patch.js';
export type { MergePatch, PatchHelperOptions } from './patch.js';

export { LeaderElector, formatMicroTime, leaderIdentity } from './leader-election.js';
export type { Lease, LeaderCallbacks, LeaderElectorOptions } from './leader-election.js';

export { EventRecorder } from './events.js';
export type { EventInput, EventRecorderOptions, EventType } from './events.js';

export { LeadershipLostError, Manager } from './manager.js';
export type { ManagerLeaderElectionOptions, ManagerOptions, Runnable, RunnableOptions } from './manager.js';
export { startProbeServer } from './health.js';
export type { Check, ProbeServerOptions } from './health.js';
export { collectProcessMetrics, createRuntimeMetrics, startMetricsServer } from './metrics.js';
export type { RuntimeMetrics } from './metrics.js';
export { parseBindAddress } from './http-server.js';
export type { ServerHandle } from './http-server.js';

export { createLogger, errorFields, parseLogLevel, redactString, redactValue, silentLogger } from './log.js';
export type { LogFormat, LogLevel, Logger, LoggerOptions } from './log.js';

export { intFlag, normalizeBooleanFlags, podNamespace, readRuntimeFlags, runtimeFlagOptions, urlFlag } from './flags.js';
export type { RuntimeFlags } from './flags.js';

export { AdmissionServer, admissionResponse, escapeJsonPointer } from './admission/index.js';
export type {
  AdmissionHandler,
  AdmissionRequest,
  AdmissionServerOptions,
  AdmissionVerdict,
  JsonPatchOperation,
} from './admission/index.js';

export { readSecretValue } from './secrets.js';
export type { ReadSecretValueOptions, Secret, SecretValue } from './secrets.js';
export { finalizersWith, finalizersWithout, hasFinalizer, writeFinalizers } from './finalizers.js';

export { Backoff, realClock, sleep } from './clock.js';
export type { Cancel, Clock } from './clock.js';
export { runControllerMain, startInProcess } from './controller-main.js';
export type { ControllerDeps, ControllerMainOptions, InProcessController } from './controller-main.js';
