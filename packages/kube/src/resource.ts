import type { V1ObjectMeta } from '@kubernetes/client-node';

/**
 * Where a kind lives in the API. `group` is '' for the core group (/api/v1); `plural` is the
 * URL segment. One value per served version: pick the version through discovery when a kind is
 * served in several (IPAM v1beta2 or v1beta1).
 */
export interface ResourceType {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/** namespace/name of an object; no namespace for cluster-scoped kinds. */
export interface ObjectKey {
  readonly namespace?: string;
  readonly name: string;
}

/**
 * client-node's V1ObjectMeta as it travels on the wire. The generated type says `Date` for the
 * timestamps because client-node's own deserializer converts them; this package hands out the
 * JSON the API server sent, where they are RFC 3339 strings, so the type says so instead of
 * lying. (@metal-l2/api's ObjectMeta is assignable to it.)
 */
export type ObjectMeta = Omit<V1ObjectMeta, 'creationTimestamp' | 'deletionTimestamp' | 'managedFields'> & {
  creationTimestamp?: string;
  deletionTimestamp?: string;
  managedFields?: (Omit<NonNullable<V1ObjectMeta['managedFields']>[number], 'time'> & { time?: string })[];
};

/**
 * The base of every object the client and the cache handle. Controllers declare their kinds as
 * interfaces extending it (`interface IPAddressClaim extends KubeObject { spec: ...; status?: ... }`).
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

/** "group/version", or "version" for the core group. */
export function apiVersionOf(type: ResourceType): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

/** The same kind at another version (as chosen by discovery). */
export function withVersion(type: ResourceType, version: string): ResourceType {
  return { ...type, version };
}

/** The key of an object; throws when it has no name (it was never stored by the API server). */
export function keyOf(obj: { metadata?: { namespace?: string; name?: string } }): ObjectKey {
  const name = obj.metadata?.name;
  if (name === undefined || name === '') throw new Error('object has no metadata.name, so it has no key');
  const namespace = obj.metadata?.namespace;
  return namespace === undefined || namespace === '' ? { name } : { namespace, name };
}

/** "namespace/name", or "name" for cluster-scoped objects: the work-queue and cache key. */
export function keyString(key: ObjectKey): string {
  return key.namespace === undefined || key.namespace === '' ? key.name : `${key.namespace}/${key.name}`;
}

/** Inverse of keyString. Names and namespaces cannot contain '/', so the first one splits. */
export function parseKey(key: string): ObjectKey {
  const slash = key.indexOf('/');
  if (slash < 0) return { name: key };
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** Built-in kinds the runtime itself uses, and controllers often need. */
export const builtinTypes = {
  configMap: { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true },
  secret: { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  namespace: { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
  event: { group: '', version: 'v1', kind: 'Event', plural: 'events', namespaced: true },
  lease: { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true },
} as const satisfies Record<string, ResourceType>;
