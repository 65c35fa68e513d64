import type { VrfSpec } from '@metal-l2/api';
import { readSecretValue, type KubeClient, type ObjectKey } from '@metal-l2/kube';
import type { PoolRef } from '../pool-ref.js';

/** The key of the credentials Secret that holds the Metal API token. */
export const API_TOKEN_KEY = 'apiToken';

export type Credentials =
  { readonly kind: 'found'; readonly token: string; readonly secret: string } | { readonly kind: 'missing'; readonly message: string };

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
  // No token has whitespace; a Secret made from a file keeps its trailing newline.
  const read = await readSecretValue(client, located.key, { dataKey: API_TOKEN_KEY, trim: true });
  return read.kind === 'found' ? { kind: 'found', token: read.value, secret: read.where } : read;
}
