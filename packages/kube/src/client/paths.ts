import type { ResourceType } from '../resource.js';

function groupVersionPath(type: ResourceType): string {
  return type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
}

/**
 * The collection URL of a kind: in one namespace, or across all namespaces (and for
 * cluster-scoped kinds) when `namespace` is undefined.
 */
export function collectionPath(type: ResourceType, namespace: string | undefined): string {
  if (type.namespaced && namespace !== undefined && namespace !== '') {
    return `${groupVersionPath(type)}/namespaces/${encodeURIComponent(namespace)}/${type.plural}`;
  }
  return `${groupVersionPath(type)}/${type.plural}`;
}

/** The URL of one object, optionally of one of its subresources (status). */
export function objectPath(type: ResourceType, key: { namespace?: string; name: string }, subresource?: string): string {
  if (type.namespaced && (key.namespace === undefined || key.namespace === '')) {
    throw new Error(`${type.kind} is namespaced: ${key.name} needs a namespace`);
  }
  const base = `${collectionPath(type, key.namespace)}/${encodeURIComponent(key.name)}`;
  return subresource === undefined ? base : `${base}/${subresource}`;
}

/** The discovery document of an API group (/apis/<group>), or the core versions (/api). */
export function groupPath(group: string): string {
  return group === '' ? '/api' : `/apis/${group}`;
}
