// Options every resource method accepts, and how they become query parameters.

import type { QueryValue } from './transport.js';

export interface CallOptions {
  /** Cancels the call, waits included (shutdown, lost leadership). */
  signal?: AbortSignal;
}

/** `include`/`exclude`: expand or collapse nested objects (dotted, up to 3 levels). */
export interface IncludeOptions extends CallOptions {
  include?: readonly string[];
  exclude?: readonly string[];
}

/** The spec declares include/exclude with `explode: false`: one comma-separated value. */
export function includeQuery(options: IncludeOptions | undefined): Record<string, QueryValue> {
  return {
    include: options?.include === undefined || options.include.length === 0 ? undefined : options.include.join(','),
    exclude: options?.exclude === undefined || options.exclude.length === 0 ? undefined : options.exclude.join(','),
  };
}

/** Only the signal, without dropping the property under exactOptionalPropertyTypes. */
export function signalOf(options: CallOptions | undefined): { signal?: AbortSignal } {
  return options?.signal === undefined ? {} : { signal: options.signal };
}
