import * as k8s from '@kubernetes/client-node';
import type { Kind, Obj } from '@metal-l2/test-support/objects';

// Every version of the objects of one collection from a resourceVersion on, as the API server
// reports them: for "this never happened" claims that must hold for a whole stretch of a test
// (a Ready condition that flipped and flipped back, a Secret written once), which reads at some
// moments would miss.

export interface WatchedEvent {
  readonly phase: string;
  readonly object: Obj;
}

export interface CollectionWatch {
  /** Every event seen so far; throws when the watch broke (a gap would make "never" unprovable). */
  events(): readonly WatchedEvent[];
  stop(): void;
}

/**
 * Watches the collection at `path` (e.g. /api/v1/namespaces/ns/secrets) from `resourceVersion`
 * (a list's, so nothing after it is missed); a watch the API server ends is opened again from the
 * last version seen.
 */
export async function watchCollection(
  kc: k8s.KubeConfig,
  at: { readonly path: string; readonly resourceVersion: string },
  onEvent?: (event: WatchedEvent) => void,
): Promise<CollectionWatch> {
  const seen: WatchedEvent[] = [];
  let resourceVersion = at.resourceVersion;
  let failure: unknown;
  let stopped = false;
  let request: AbortController | undefined;

  const open = async (): Promise<void> => {
    request = await new k8s.Watch(kc).watch(
      at.path,
      { resourceVersion, allowWatchBookmarks: true },
      (phase: string, obj: Obj) => {
        if (phase === 'ERROR') {
          failure = new Error(`the watch of ${at.path} failed: ${JSON.stringify(obj)}`);
          return;
        }
        resourceVersion = obj.metadata.resourceVersion ?? resourceVersion;
        if (phase === 'BOOKMARK') return;
        const event = { phase, object: obj };
        seen.push(event);
        onEvent?.(event);
      },
      (err: unknown) => {
        // The API server ends watches now and then: go on from the last version seen.
        if (stopped) return;
        if (err !== null && err !== undefined && !(err instanceof Error && err.name === 'AbortError')) failure = err;
        if (failure === undefined) open().catch((e: unknown) => (failure = e));
      },
    );
  };
  await open();

  return {
    events() {
      if (failure !== undefined) throw new Error(`the watch of ${at.path} broke`, { cause: failure });
      return seen;
    },
    stop() {
      stopped = true;
      request?.abort();
    },
  };
}

/** Watches a namespace's objects of `kind` (one of ours, or core Secrets) from what a list shows now. */
export async function watchNamespaceFromNow(kc: k8s.KubeConfig, kind: Kind | 'secrets', namespace: string): Promise<CollectionWatch> {
  if (kind === 'secrets') {
    const list = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace });
    return watchCollection(kc, { path: `/api/v1/namespaces/${namespace}/secrets`, resourceVersion: list.metadata?.resourceVersion ?? '' });
  }
  const { group, version, plural } = kind;
  const list = (await kc.makeApiClient(k8s.CustomObjectsApi).listNamespacedCustomObject({ group, version, plural, namespace })) as {
    metadata?: { resourceVersion?: string };
  };
  return watchCollection(kc, {
    path: `/apis/${group}/${version}/namespaces/${namespace}/${plural}`,
    resourceVersion: list.metadata?.resourceVersion ?? '',
  });
}

/**
 * Every version the watch saw of an object whose conditions `types` were not all True after a
 * version of the same object where they were (or of one of `settled`, known to be there when the
 * watch began): a flip, however short. Versions before an object first got there (a machine still
 * coming up) are not flips.
 */
export function conditionFlips(
  watch: CollectionWatch,
  types: readonly string[],
  options: { readonly settled?: readonly string[] } = {},
): string[] {
  const settled = new Set<string>(options.settled ?? []);
  const found: string[] = [];
  for (const { phase, object } of watch.events()) {
    const conditions = (object.status?.conditions ?? []) as { type: string; status?: string }[];
    const allTrue = types.every((t) => conditions.find((c) => c.type === t)?.status === 'True');
    const name = object.metadata.name;
    if (allTrue) settled.add(name);
    else if (settled.has(name) || phase === 'DELETED') found.push(`${phase} ${name}: ${JSON.stringify(conditions)}`);
  }
  return found;
}
