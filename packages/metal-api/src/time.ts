// The client's only contact with time and chance. Production uses the system; tests pass their own
// so that backoff, Retry-After and rate limiting are checked without waiting real time.

export interface TimeSource {
  /** Milliseconds since the epoch (Date.now). */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason as soon as the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Uniform in [0, 1), for jitter. */
  random(): number;
}

export const systemTime: TimeSource = {
  now: () => Date.now(),
  sleep: sleepFor,
  random: () => Math.random(),
};

function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('sleep aborted', { cause: reason });
}
