import { isMetalApiError, isMetalGone, isMetalHttpError, judgeMetalError, type MetalApiError } from '@metal-l2/metal-api';

/**
 * A Metal call a VRF step made failed. The message says what was attempted, on which object, and
 * what Metal answered (the client's message: operation, path, status, the API's errors; never the
 * token). It becomes the VRFReady message as is.
 */
export class VrfMetalError extends Error {
  override readonly name = 'VrfMetalError';
  readonly code = 'VRF_METAL_CALL';
  /** How long Metal asked us to wait (429 Retry-After beyond what the client waits out itself). */
  readonly retryAfterMs: number | undefined;
  readonly status: number | undefined;
  /**
   * Whether Metal may have acted although the call failed: no answer (timeout, connection lost),
   * a 5xx, or a 2xx we could not read. A 429 or another 4xx means it did not.
   */
  readonly mayHaveActed: boolean;

  constructor(what: string, cause: MetalApiError) {
    super(`${what}: ${cause.message}`, { cause });
    // The shared Metal error policy (metal-api) decides; the VRF steps add their own backoff.
    const verdict = judgeMetalError(cause, { failures: 1 });
    this.retryAfterMs = verdict.kind === 'retry' && verdict.retryAfter ? verdict.afterMs : undefined;
    this.status = isMetalHttpError(cause) ? cause.status : undefined;
    this.mayHaveActed = verdict.kind === 'retry' && verdict.mayHaveActed;
  }
}

export function isVrfMetalError(err: unknown): err is VrfMetalError {
  return err instanceof VrfMetalError;
}

/** Runs one Metal call, naming what it attempted when it fails. */
export async function metalCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err: unknown) {
    if (isMetalApiError(err)) throw new VrfMetalError(what, err);
    throw err;
  }
}

/** Like metalCall, for reads and deletes where 404 is an answer: undefined when the object is gone. */
export async function metalCallOrGone<T>(what: string, call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (err: unknown) {
    if (isMetalGone(err)) return undefined;
    if (isMetalApiError(err)) throw new VrfMetalError(what, err);
    throw err;
  }
}
