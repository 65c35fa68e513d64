// What `clusterctl move` does to objects, for the move check: copy each object to the target
// control plane without status, uid, resourceVersion or timestamps, owners first, with owner
// references pointing at the copies' new uids (a reference to an object that was not copied is
// dropped, so the target's garbage collector does not take the copy away).

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
  for (const kind of options.kinds) {
    if (kind.kind === 'Secret') {
      for (const name of options.secrets) {
        const secret = await coreSource.readNamespacedSecret({ name, namespace: options.namespace });
        const body = remap(stripForMove(secret as unknown as Obj)) as unknown as k8s.V1Secret;
        const created = await coreTarget.createNamespacedSecret({ namespace: options.namespace, body });
        uids.set(`Secret/${name}`, created.metadata?.uid ?? '');
        copied += 1;
      }
      continue;
    }
    for (const obj of await from.list(kind, options.namespace)) {
      const prepared = remap(stripForMove(obj));
      const body = options.transform === undefined ? prepared : options.transform(kind, prepared);
      const created = await to.create(kind, body);
      uids.set(`${kind.kind}/${obj.metadata.name}`, created.metadata.uid ?? '');
      copied += 1;
    }
  }
  return { copied, uids };
}
