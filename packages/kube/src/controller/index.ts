export { Controller, DEFAULT_RECONCILE_TIMEOUT_MS } from './controller.js';
export type { ControllerOptions, ControllerWatchOptions, EventMapper } from './controller.js';
export { done, requeueAfter, soonest } from './result.js';
export type { ReconcileContext, ReconcileResult, Reconciler } from './result.js';
export { failed, proceed, runSteps, waitFor } from './steps.js';
export type { Phase, Step, StepOutcome } from './steps.js';
