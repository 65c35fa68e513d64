// Finalizers, the one way every controller here adds and removes them: compute the whole list,
// then write it as a merge patch guarded by the resourceVersion read, so that a finalizer someone
// else wrote meanwhile is never lost (the write fails with Conflict instead, and the caller reads
// the object again).

import type { KubeClient } from './client/index.js';
import { keyOf, type KubeObject, type ResourceType } from './resource.js';

type WithFinalizers = Pick<KubeObject, 'metadata'>;

export function hasFinalizer(obj: WithFinalizers, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/** The object's finalizers with `finalizer` added at the end; undefined when it is there already. */
export function finalizersWith(obj: WithFinalizers, finalizer: string): string[] | undefined {
  const finalizers = obj.metadata.finalizers ?? [];
  return finalizers.includes(finalizer) ? undefined : [...finalizers, finalizer];
}

/** The object's finalizers without `finalizer`; undefined when it is not there. */
export function finalizersWithout(obj: WithFinalizers, finalizer: string): string[] | undefined {
  const finalizers = obj.metadata.finalizers ?? [];
  return finalizers.includes(finalizer) ? finalizers.filter((f) => f !== finalizer) : undefined;
}

/**
 * Writes `finalizers` as the object's whole list, guarded by the resourceVersion `object` was read
 * at (unless `guarded: false`: for a list taken from the latest write, where any change since is
 * someone else's and may be overwritten). Throws what the API server answered (Conflict, NotFound).
 */
export async function writeFinalizers<T extends KubeObject = KubeObject>(
  client: Pick<KubeClient, 'patch'>,
  at: {
    readonly type: ResourceType;
    readonly object: WithFinalizers;
    readonly finalizers: readonly string[];
    readonly guarded?: boolean;
    readonly signal?: AbortSignal | undefined;
  },
): Promise<T> {
  const version = at.guarded === false ? undefined : at.object.metadata.resourceVersion;
  return client.patch<T>(
    at.type,
    keyOf(at.object),
    { metadata: { finalizers: [...at.finalizers] } },
    { ...(version === undefined ? {} : { resourceVersion: version }), ...(at.signal === undefined ? {} : { signal: at.signal }) },
  );
}
