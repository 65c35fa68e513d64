// The shared Metal error policy (metal-api's error-policy) applied to one machine: a Retry-After
// is the requeue delay, other failures back off exponentially over the machine's failures in a
// row, and until the wait is over no Metal call is made for the machine, whatever event wakes it
// (a claim or Machine update would otherwise call again at once). Kept in memory: a restart
// starts the streak again, which only makes one retry come sooner. The streak ends when the
// ports converge.

import { failed, type StepOutcome, waitFor } from '@metal-l2/kube';
import { judgeMetalError, metalBackoffMs, type MetalBackoff } from '@metal-l2/metal-api';
import { type MachineNetworkScope, type Step } from './scope.js';

/** One machine's Metal failures in a row and when it may call Metal again. */
export interface MetalStreak {
  readonly failures: number;
  readonly notBeforeMs: number;
}

function streakKey(scope: MachineNetworkScope): string {
  return scope.machineNetwork.metadata.uid ?? `${scope.namespace}/${scope.name}`;
}

function backoffOf(scope: MachineNetworkScope): MetalBackoff {
  return { baseMs: scope.ctx.timings.metalRetryMs, maxMs: scope.ctx.timings.metalRetryMaxMs };
}

function failures(scope: MachineNetworkScope): number {
  return (scope.ctx.metalStreaks.get(streakKey(scope))?.failures ?? 0) + 1;
}

function holdOff(scope: MachineNetworkScope, streak: { failures: number; afterMs: number }): StepOutcome {
  scope.ctx.metalStreaks.set(streakKey(scope), { failures: streak.failures, notBeforeMs: scope.ctx.now().getTime() + streak.afterMs });
  return waitFor(streak.afterMs);
}

/**
 * What to do after a failed Metal call: come back when Metal said (Retry-After) or after the
 * backoff. Errors that are not Metal's (and aborted calls: shutdown, the reconcile's deadline)
 * fail the reconcile, so the queue's own backoff applies. The caller has set the condition.
 */
export function afterMetalError(scope: MachineNetworkScope, what: string, err: unknown): StepOutcome {
  const n = failures(scope);
  const verdict = judgeMetalError(err, { failures: n, backoff: backoffOf(scope) });
  switch (verdict.kind) {
    case 'retry':
      return holdOff(scope, { failures: n, afterMs: verdict.afterMs });
    case 'gone':
      // A 404 where the caller expected the object: as any other failure, with the backoff.
      return holdOff(scope, { failures: n, afterMs: metalBackoffMs(backoffOf(scope), n) });
    case 'aborted':
    case 'other':
      return failed(new Error(what, { cause: err }));
  }
}

/** After a failure Metal reported without an error (a VLAN batch that failed): the backoff. */
export function afterMetalFailure(scope: MachineNetworkScope): StepOutcome {
  const n = failures(scope);
  return holdOff(scope, { failures: n, afterMs: metalBackoffMs(backoffOf(scope), n) });
}

/** The machine's Metal work succeeded: the next failure starts a new streak. */
export function metalSucceeded(scope: MachineNetworkScope): void {
  scope.ctx.metalStreaks.delete(streakKey(scope));
}

/** `step` (one that calls Metal), unless the machine is still waiting out a Metal failure. */
export function afterMetalWait(step: Step): Step {
  return async (scope) => {
    const notBefore = scope.ctx.metalStreaks.get(streakKey(scope))?.notBeforeMs ?? 0;
    const leftMs = notBefore - scope.ctx.now().getTime();
    return leftMs > 0 ? waitFor(leftMs) : step(scope);
  };
}
