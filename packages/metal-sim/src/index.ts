// @metal-l2/metal-sim: a stateful Equinix Metal API simulator for tests and the demo.

export { startSimulator } from './server.js';
export type { Simulator, SimulatorOptions } from './server.js';
export { SimulatorStore, DEFAULT_DELAYS } from './store.js';
export type { SimDelays, StoreChange, StoreListener } from './store.js';
export { ManualClock, SystemClock } from './clock.js';
export type { SimClock, CancelTask } from './clock.js';
export { FaultInjector, FaultSpecError, parseFaultRules } from './faults.js';
export type { FaultKind, FaultRule, FaultRuleInput, FaultDecision } from './faults.js';
export { RequestLog } from './request-log.js';
export { SimRateLimiter, RateLimitSpecError, parseRateLimit } from './rate-limit.js';
export type { SimRateLimit, RateDecision } from './rate-limit.js';
export type { RequestFilter, RequestLogEntry } from './request-log.js';
export { ContractValidator, defaultSpecPath, specAvailable } from './contract.js';
export type { ContractReport, ContractViolation, WaivedFinding } from './contract.js';
export { DEFAULT_SEED, SeedError, loadSeedFile, parseSeed } from './seed.js';
export type { SeedConfig, SeedMetro, SeedPlan, SeedProject, SeedToken } from './seed.js';
export { metadataPaths } from './routes/metadata-service.js';
export { API_PREFIX } from './http.js';
export type { NetworkType } from './network-type.js';
export { startInterceptingProxy, EQUINIX_API_HOST } from './intercepting-proxy.js';
export type { InterceptingProxy, InterceptingProxyOptions, RefusedProxyRequest } from './intercepting-proxy.js';
