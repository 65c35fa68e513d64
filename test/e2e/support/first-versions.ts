import * as k8s from '@kubernetes/client-node';
import type { Kind, Obj } from '@metal-l2/test-support/objects';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { watchCollection } from './watch-versions.js';

// What an object looked like when it was created (after mutating admission: what a webhook made
// of it), from a watch opened before anyone creates it. A read at some later moment shows what
// the controllers have made of it since, so "our webhook paused it" read back later passes or
// fails by timing; the ADDED event of a watch started from a list's resourceVersion is the
// created version itself.

export interface FirstVersions {
  /** Waits for the first version the API server reported of the object `name` created after the watch began. */
  of(name: string, timeoutMs: number): Promise<Obj>;
  stop(): void;
}

/** Opens the watch on `kind` in `namespace` (from a list's resourceVersion, so nothing created after this call is missed). */
export async function watchFirstVersions(kc: k8s.KubeConfig, kind: Kind, namespace: string): Promise<FirstVersions> {
  // The core group ('': Secrets, ...) lives under /api, every other group under /apis.
  const core = kind.group === '';
  if (core && kind.plural !== 'secrets') throw new Error(`watchFirstVersions: of the core group only Secrets, not ${kind.plural}`);
  const path = `${core ? '/api' : `/apis/${kind.group}`}/${kind.version}/namespaces/${namespace}/${kind.plural}`;
  const list = (await (core
    ? kc.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace })
    : kc
        .makeApiClient(k8s.CustomObjectsApi)
        .listNamespacedCustomObject({ group: kind.group, version: kind.version, plural: kind.plural, namespace }))) as {
    metadata?: { resourceVersion?: string };
    items: Obj[];
  };
  const existing = new Set(list.items.map((o) => o.metadata.name));
  const first = new Map<string, Obj>();
  const watch = await watchCollection(kc, { path, resourceVersion: list.metadata?.resourceVersion ?? '' }, ({ phase, object }) => {
    if (phase === 'ADDED' && !first.has(object.metadata.name)) first.set(object.metadata.name, object);
  });

  return {
    async of(name, timeoutMs) {
      if (existing.has(name)) throw new Error(`${kind.kind} ${namespace}/${name} existed before the watch began`);
      return waitFor(
        `the first version of ${kind.kind} ${namespace}/${name}`,
        () => {
          watch.events(); // throws when the watch broke
          return first.get(name);
        },
        { timeoutMs },
      );
    },
    stop() {
      watch.stop();
    },
  };
}
