// What `clusterctl move` does to objects, for the move check: copy each object to the target
// control plane without status, uid, resourceVersion or timestamps, owners first, with owner
// references pointing at the copies' new uids (a reference to an object that was not copied is
// dropped, so the target's garbage collector does not take the copy away); then, once the target
// is unpaused, delete the source objects the way clusterctl does (deleteMovedObjects).

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
  options: {
    readonly namespace: string;
    readonly kinds: readonly Kind[];
    readonly secrets: readonly string[];
    readonly transform?: (kind: Kind, obj: Obj) => Obj;
    /** Which objects of a kind move (default: all in the namespace), as clusterctl's owner graph picks them. */
    readonly filter?: (kind: Kind, obj: Obj) => boolean;
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
  const retarget = (obj: Obj): Obj => ({ ...obj, metadata: { ...obj.metadata, namespace: targetNamespace } });
  for (const kind of options.kinds) {
    if (kind.kind === 'Secret') {
      for (const name of options.secrets) {
        const secret = await coreSource.readNamespacedSecret({ name, namespace: options.namespace });
        const body = retarget(remap(stripForMove(secret as unknown as Obj))) as unknown as k8s.V1Secret;
        const created = await coreTarget.createNamespacedSecret({ namespace: targetNamespace, body });
        uids.set(`Secret/${name}`, created.metadata?.uid ?? '');
        copied += 1;
      }
      continue;
    }
    for (const obj of await from.list(kind, options.namespace)) {
      if (options.filter !== undefined && !options.filter(kind, obj)) continue;
      const prepared = retarget(remap(stripForMove(obj)));
      const body = options.transform === undefined ? prepared : options.transform(kind, prepared);
      const created = await to.create(kind, body);
      uids.set(`${kind.kind}/${obj.metadata.name}`, created.metadata.uid ?? '');
      copied += 1;
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
 * Returns how many were deleted.
 */
export async function deleteMovedObjects(
  source: k8s.KubeConfig,
  options: {
    readonly namespace: string;
    readonly kinds: readonly Kind[];
    readonly secrets: readonly string[];
    readonly filter?: (kind: Kind, obj: Obj) => boolean;
  },
): Promise<number> {
  const from = new Objects(source);
  const core = source.makeApiClient(k8s.CoreV1Api);
  let deleted = 0;
  for (const kind of [...options.kinds].reverse()) {
    if (kind.kind === 'Secret') {
      for (const name of options.secrets) {
        await core.deleteNamespacedSecret({ name, namespace: options.namespace });
        deleted += 1;
      }
      continue;
    }
    for (const obj of await from.list(kind, options.namespace)) {
      if (options.filter !== undefined && !options.filter(kind, obj)) continue;
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
