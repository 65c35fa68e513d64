// A reconcile as a list of steps (cluster-api's phases): each step looks at observed state first,
// does at most one kind of write and says what comes next; the runner stops at the first step that
// does not say "continue". Both of the network controller's reconcilers run their steps here.

/**
 * What a step asks for next; the runner stops at the first that is not `continue`.
 * - wait: nothing more to do now; a watched object will change (or come back after `afterMs`).
 * - fail: a retryable failure; the condition is already set, the queue backs off.
 */
export type StepOutcome =
  { readonly kind: 'continue' } | { readonly kind: 'wait'; readonly afterMs?: number } | { readonly kind: 'fail'; readonly error: unknown };

/** One step over what the reconcile read (its scope). */
export type Step<S> = (scope: S) => Promise<StepOutcome>;

/** A phase of a step either ends the step with an outcome or hands the next phase what it needs. */
export type Phase<T> = { readonly stop: StepOutcome } | { readonly next: T };

export const proceed: StepOutcome = { kind: 'continue' };

export function waitFor(afterMs?: number): StepOutcome {
  return afterMs === undefined ? { kind: 'wait' } : { kind: 'wait', afterMs };
}

export function failed(error: unknown): StepOutcome {
  return { kind: 'fail', error };
}

/** Runs `steps` in order until one does not continue; its outcome (or `continue`) is the answer. */
export async function runSteps<S>(scope: S, steps: readonly Step<S>[]): Promise<StepOutcome> {
  for (const step of steps) {
    const outcome = await step(scope);
    if (outcome.kind !== 'continue') return outcome;
  }
  return proceed;
}
