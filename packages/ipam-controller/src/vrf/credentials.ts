import type { VrfSpec } from '@metal-l2/api';
import { builtinTypes, isForbidden, type KubeClient, type KubeObject, type ObjectKey } from '@metal-l2/kube';
import type { PoolRef } from '../pool/pool-ref.js';

/** The key of the credentials Secret that holds the Metal API token. */
export const API_TOKEN_KEY = 'apiToken';

interface Secret extends KubeObject {
  readonly data?: Record<string, string>;
}

export type Credentials =
  | { readonly kind: 'found'; readonly token: string; readonly secret: string }
  | { readonly kind: 'missing'; readonly message: string };

/**
 * Where a pool's credentials Secret lives; when it cannot be told, a message about
 * spec.vrf.credentialsSecretRef.namespace. A namespaced pool reads only its own namespace: letting
 * it name another would let anyone who may create pools use a token they may not read. A global
 * pool (created by cluster admins) may name any namespace, and defaults to the controller's.
 */
export function credentialsSecretKey(
  ref: PoolRef,
  spec: Pick<VrfSpec, 'credentialsSecretRef'>,
  controllerNamespace: string | undefined,
): { readonly kind: 'ok'; readonly key: Required<ObjectKey> } | { readonly kind: 'invalid'; readonly message: string } {
  const { name, namespace } = spec.credentialsSecretRef;
  if (ref.namespace !== undefined) {
    if (namespace !== undefined && namespace !== ref.namespace) {
      return { kind: 'invalid', message: `must be the pool's own namespace ${ref.namespace} (or left out), not ${namespace}` };
    }
    return { kind: 'ok', key: { namespace: ref.namespace, name } };
  }
  const ns = namespace ?? controllerNamespace;
  if (ns === undefined) {
    return { kind: 'invalid', message: 'must be set: the controller was started without --controller-namespace (or POD_NAMESPACE)' };
  }
  return { kind: 'ok', key: { namespace: ns, name } };
}

/**
 * Reads the Metal API token from the pool's Secret (asked of the API server: Secrets are not
 * cached, and are read only when a pool's Metal side is checked). A Secret that is absent,
 * unreadable or without a non-empty `apiToken` is reported, never thrown: only a user can fix it.
 */
export async function readCredentials(
  client: KubeClient,
  input: { readonly ref: PoolRef; readonly spec: Pick<VrfSpec, 'credentialsSecretRef'>; readonly controllerNamespace: string | undefined },
): Promise<Credentials> {
  const located = credentialsSecretKey(input.ref, input.spec, input.controllerNamespace);
  if (located.kind === 'invalid') return { kind: 'missing', message: `spec.vrf.credentialsSecretRef.namespace ${located.message}` };
  const where = `Secret ${located.key.namespace}/${located.key.name}`;
  let secret: Secret | undefined;
  try {
    secret = await client.get<Secret>(builtinTypes.secret, located.key);
  } catch (err: unknown) {
    if (isForbidden(err)) return { kind: 'missing', message: `the controller may not read ${where} (RBAC: get secrets)` };
    throw err;
  }
  if (secret === undefined) return { kind: 'missing', message: `${where} not found` };
  const encoded = secret.data?.[API_TOKEN_KEY];
  if (encoded === undefined) return { kind: 'missing', message: `${where} has no key ${API_TOKEN_KEY}` };
  // `kubectl create secret --from-file` keeps the file's trailing newline; no token has whitespace.
  const token = Buffer.from(encoded, 'base64').toString('utf8').trim();
  if (token === '') return { kind: 'missing', message: `${where} has an empty ${API_TOKEN_KEY}` };
  return { kind: 'found', token, secret: where };
}
