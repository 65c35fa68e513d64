// Reading one value out of a Secret, the way controllers read credentials: asked of the API server
// (Secrets are not cached), and with every problem a user must fix reported as a value.

import type { KubeClient } from './client/index.js';
import { isForbidden } from './errors.js';
import { builtinTypes, type KubeObject, type ObjectKey } from './resource.js';

/** A core/v1 Secret, as far as the controllers read it. */
export interface Secret extends KubeObject {
  data?: Record<string, string>;
  immutable?: boolean;
}

/**
 * A Secret value, or why there is none. `where` ("Secret ns/name") names the Secret for messages;
 * the value itself must never be logged or put in a message, condition or event.
 */
export type SecretValue =
  { readonly kind: 'found'; readonly value: string; readonly where: string } | { readonly kind: 'missing'; readonly message: string };

export interface ReadSecretValueOptions {
  /** The key under `data`, e.g. `apiToken`. */
  readonly dataKey: string;
  /** Drop surrounding whitespace (`kubectl create secret --from-file` keeps the file's newline). */
  readonly trim?: boolean;
  readonly signal?: AbortSignal;
}

/**
 * Reads and decodes `data[dataKey]` of a Secret. A Secret that is absent, that the controller may
 * not read (RBAC), or whose key is absent or empty is reported as `missing` with a message naming
 * the Secret and the key, never thrown: only a user can fix those. Other API errors (unreachable,
 * 5xx, timeouts) are thrown as KubeApiError, to be retried.
 */
export async function readSecretValue(client: KubeClient, key: Required<ObjectKey>, options: ReadSecretValueOptions): Promise<SecretValue> {
  const where = `Secret ${key.namespace}/${key.name}`;
  let secret: Secret | undefined;
  try {
    secret = await client.get<Secret>(builtinTypes.secret, key, options.signal === undefined ? {} : { signal: options.signal });
  } catch (err: unknown) {
    if (isForbidden(err)) return { kind: 'missing', message: `the controller may not read ${where} (RBAC: get secrets)` };
    throw err;
  }
  if (secret === undefined) return { kind: 'missing', message: `${where} not found` };
  const encoded = secret.data?.[options.dataKey];
  if (encoded === undefined) return { kind: 'missing', message: `${where} has no key ${options.dataKey}` };
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const value = options.trim === true ? decoded.trim() : decoded;
  if (value === '') return { kind: 'missing', message: `${where} has an empty ${options.dataKey}` };
  return { kind: 'found', value, where };
}
