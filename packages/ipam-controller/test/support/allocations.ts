import * as k8s from '@kubernetes/client-node';
import { kinds, type Obj, type Objects } from '@metal-l2/test-support/objects';

/** A pool's IPAddressBlocks, as the API server has them. */
export async function blocksOf(objects: Objects, pool: Obj | undefined): Promise<Obj[]> {
  const namespace = (pool?.status?.blocks as { namespace?: string } | undefined)?.namespace;
  if (pool === undefined || namespace === undefined) return [];
  const uid = pool.metadata.uid;
  return (await objects.list(kinds.block, namespace)).filter((b) => (b.spec?.poolRef as { uid?: string } | undefined)?.uid === uid);
}

/**
 * Everything a pool holds, read from the API server: its blocks' allocations and, for a pool not
 * yet moved to blocks, its own status's; address → `[namespace/]claim[@releasedAt]`.
 */
export async function allocationsOf(objects: Objects, pool: Obj | undefined): Promise<Record<string, string>> {
  const all: Record<string, string> = { ...((pool?.status?.allocations ?? {}) as Record<string, string>) };
  for (const block of await blocksOf(objects, pool)) Object.assign(all, (block.status?.allocations ?? {}) as Record<string, string>);
  return all;
}

/**
 * Merge-patches an InClusterIPPool's status as a backup restore or a hand edit leaves it: `null`
 * drops all of it (a restore without status), `{ field: null }` one field.
 */
export async function patchPoolStatus(
  kc: k8s.KubeConfig,
  pool: { namespace: string; name: string },
  status: Record<string, unknown> | null,
): Promise<void> {
  await kc
    .makeApiClient(k8s.CustomObjectsApi)
    .patchNamespacedCustomObjectStatus(
      { group: kinds.pool.group, version: kinds.pool.version, plural: kinds.pool.plural, ...pool, body: { status } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
}
