import { pollIntervalMs } from './timeouts.js';

export interface WaitOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
}

/**
 * Polls `probe` until it returns something other than undefined/false, or the deadline passes.
 * On timeout the error names what was awaited and the last value or error the probe produced.
 */
export async function waitFor<T>(
  description: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  options: WaitOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? pollIntervalMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (err: unknown) {
      last = err;
    }
    if (Date.now() >= deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${description}; last seen: ${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** Asserts that `probe` keeps returning true for `forMs` (only for "this never happens" claims). */
export async function staysTrue(description: string, probe: () => Promise<boolean> | boolean, forMs: number): Promise<void> {
  const end = Date.now() + forMs;
  while (Date.now() < end) {
    if (!(await probe())) throw new Error(`expected ${description} to hold for ${forMs} ms, but it stopped holding`);
    await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
  }
}
