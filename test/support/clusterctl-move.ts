// What `clusterctl move` (v1.7.9, cmd/clusterctl/client/cluster/mover.go) does to objects, for the
// move checks: copy each object to the target control plane without status, uid, resourceVersion
// or timestamps, owners first, with owner references pointing at the copies' new uids (a reference
// to an object that was not copied is dropped, so the target's garbage collector does not take the
// copy away); then delete the source objects the way clusterctl does (deleteMovedObjects).
//
// Cluster-scoped objects (a GlobalInClusterIPPool) and what they own (its IPAddressBlocks, and the
// IPAddresses it owns beside their claim: clusterctl's "global hierarchy", objectgraph.go
// setTenant) are copied only when the target does not have them yet (createTargetObject skips an
// AlreadyExists) and are never deleted from the source (deleteSourceObject returns early).

import * as k8s from '@kubernetes/client-node';
import type { Kind, Obj } from '@metal-l2/test-support/objects';
import { Objects } from '@metal-l2/test-support/objects';

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

function stripForMove(obj: Obj): Obj {
  const {
    uid: _uid,
    resourceVersion: _rv,
    deletionTimestamp: _dt,
    ...metadata
  } = obj.metadata as Obj['metadata'] & Record<string, unknown>;
  delete (metadata as Record<string, unknown>)['creationTimestamp'];
  delete (metadata as Record<string, unknown>)['managedFields'];
  delete (metadata as Record<string, unknown>)['generation'];
  const { status: _status, ...rest } = obj;
  return { ...rest, metadata: metadata };
}

/** Kinds whose objects are cluster-scoped, by kind name: what clusterctl calls global. */
function globalKinds(kinds: readonly Kind[]): Set<string> {
  return new Set(kinds.filter((k) => !k.namespaced).map((k) => k.kind));
}

/** A global object, or one a global object owns: clusterctl copies it if absent and never deletes it. */
function isGlobal(kind: Kind, obj: Obj, global: ReadonlySet<string>): boolean {
  if (!kind.namespaced) return true;
  return ((obj.metadata.ownerReferences ?? []) as OwnerReference[]).some((r) => global.has(r.kind));
}

function isAlreadyExists(err: unknown): boolean {
  return err instanceof k8s.ApiException && err.code === 409;
}

/** What a move takes: from which namespace, which kinds (owners first), which Secrets by name. */
export interface MoveSelection {
  readonly namespace: string;
  readonly kinds: readonly Kind[];
  readonly secrets: readonly string[];
  /** Which objects of a kind move (default: all in the namespace), as clusterctl's owner graph picks them. */
  readonly filter?: (kind: Kind, obj: Obj) => boolean;
}

export interface MoveResult {
  readonly copied: number;
  /** kind/name → the copy's uid on the target. */
  readonly uids: ReadonlyMap<string, string>;
}

/**
 * Copies the objects of `kinds` (in that order: owners before what they own) and the given
 * Secrets from `namespace` on the source to the same namespace on the target.
 */
export async function moveObjects(
  source: k8s.KubeConfig,
  target: k8s.KubeConfig,
  options: MoveSelection & {
    readonly transform?: (kind: Kind, obj: Obj) => Obj;
    /** The namespace on the target (default: the same); another one lets a test move within one control plane. */
    readonly targetNamespace?: string;
  },
): Promise<MoveResult> {
  const from = new Objects(source);
  const to = new Objects(target);
  const uids = new Map<string, string>();
  const remap = (obj: Obj): Obj => {
    const refs = (obj.metadata.ownerReferences ?? []) as OwnerReference[];
    const kept = refs.flatMap((r) => {
      const uid = uids.get(`${r.kind}/${r.name}`);
      return uid === undefined ? [] : [{ ...r, uid }];
    });
    return { ...obj, metadata: { ...obj.metadata, ownerReferences: kept } };
  };
  let copied = 0;
  const coreTarget = target.makeApiClient(k8s.CoreV1Api);
  const coreSource = source.makeApiClient(k8s.CoreV1Api);
  const targetNamespace = options.targetNamespace ?? options.namespace;
  const global = globalKinds(options.kinds);
  const retarget = (kind: Kind, obj: Obj): Obj =>
    kind.namespaced ? { ...obj, metadata: { ...obj.metadata, namespace: targetNamespace } } : obj;
  for (const kind of options.kinds) {
    if (kind.kind === 'Secret') {
      for (const name of options.secrets) {
        const secret = await coreSource.readNamespacedSecret({ name, namespace: options.namespace });
        const body = retarget(kind, remap(stripForMove(secret as unknown as Obj))) as unknown as k8s.V1Secret;
        const created = await coreTarget.createNamespacedSecret({ namespace: targetNamespace, body });
        uids.set(`Secret/${name}`, created.metadata?.uid ?? '');
        copied += 1;
      }
      continue;
    }
    for (const obj of await from.list(kind, kind.namespaced ? options.namespace : undefined)) {
      if (options.filter !== undefined && !options.filter(kind, obj)) continue;
      const prepared = retarget(kind, remap(stripForMove(obj)));
      const body = options.transform === undefined ? prepared : options.transform(kind, prepared);
      try {
        const created = await to.create(kind, body);
        uids.set(`${kind.kind}/${obj.metadata.name}`, created.metadata.uid ?? '');
        copied += 1;
      } catch (err: unknown) {
        // clusterctl leaves a global object the target already has as it is, and goes on with the
        // source's uid for it (the failed create did not fill the object in).
        if (!isAlreadyExists(err) || !isGlobal(kind, obj, global)) throw err;
        uids.set(`${kind.kind}/${obj.metadata.name}`, obj.metadata.uid ?? '');
      }
    }
  }
  return { copied, uids };
}

/** What clusterctl marks each source object with before deleting it, so providers can tell a move from a deletion. */
export const DELETE_FOR_MOVE = 'clusterctl.cluster.x-k8s.io/delete-for-move';

/**
 * The last step of clusterctl move (mover.go deleteSourceObject): the source objects deleted in
 * the reverse of the copy order, each first annotated delete-for-move and stripped of its
 * finalizers (so no provider's finalizer runs: nothing is released or torn down for a move).
 * Global objects and what they own stay in the source. Returns how many were deleted.
 */
export async function deleteMovedObjects(source: k8s.KubeConfig, options: MoveSelection): Promise<number> {
  const from = new Objects(source);
  const core = source.makeApiClient(k8s.CoreV1Api);
  const global = globalKinds(options.kinds);
  let deleted = 0;
  for (const kind of [...options.kinds].reverse()) {
    if (kind.kind === 'Secret') {
      for (const name of options.secrets) {
        await core.deleteNamespacedSecret({ name, namespace: options.namespace });
        deleted += 1;
      }
      continue;
    }
    for (const obj of await from.list(kind, kind.namespaced ? options.namespace : undefined)) {
      if (options.filter !== undefined && !options.filter(kind, obj)) continue;
      if (isGlobal(kind, obj, global)) continue;
      const name = obj.metadata.name ?? '';
      // clusterctl's JSON patch `add /metadata/annotations` replaces them all with this one.
      const cleared = Object.fromEntries(Object.keys(obj.metadata.annotations ?? {}).map((key) => [key, null]));
      await from.patch(kind, name, options.namespace, {
        metadata: { annotations: { ...cleared, [DELETE_FOR_MOVE]: '' }, finalizers: null },
      });
      await from.delete(kind, name, options.namespace);
      deleted += 1;
    }
  }
  return deleted;
}

/**
 * The kinds `clusterctl move` knows, found the way clusterctl v1.7.9 finds them
 * (cmd/clusterctl/client/cluster/objectgraph.go): the CRDs labelled clusterctl.cluster.x-k8s.io,
 * each moved with the owner graph ('graph'), every object of it ('move'), or every object with
 * what it owns ('move-hierarchy'). Keys are `<plural>.<group>`.
 */
export async function clusterctlMoveKinds(kc: k8s.KubeConfig): Promise<Map<string, 'graph' | 'move' | 'move-hierarchy'>> {
  const crds = await kc
    .makeApiClient(k8s.ApiextensionsV1Api)
    .listCustomResourceDefinition({ labelSelector: 'clusterctl.cluster.x-k8s.io' });
  const kinds = new Map<string, 'graph' | 'move' | 'move-hierarchy'>();
  for (const crd of crds.items) {
    const labels = crd.metadata?.labels ?? {};
    const how =
      labels['clusterctl.cluster.x-k8s.io/move-hierarchy'] !== undefined
        ? 'move-hierarchy'
        : labels['clusterctl.cluster.x-k8s.io/move'] !== undefined
          ? 'move'
          : 'graph';
    kinds.set(crd.metadata?.name ?? '', how);
  }
  return kinds;
}
