import { builtinTypes, isForbidden, type KubeClient } from '@metal-l2/kube';

/**
 * The management cluster's identity, tagged on every Metal object a pool creates (vrf/ownership.ts)
 * so that two management clusters sharing a Metal project never take each other's objects.
 *
 * By default it is the UID of the kube-system Namespace: made once when the cluster is created,
 * never changed, different in every cluster (what kubeadm-era tools and Cluster API's own
 * telemetry use as a cluster id). `--cluster-identity` overrides it for the cases the UID is wrong
 * for: a management cluster rebuilt from a backup or moved with `clusterctl move` (a new
 * kube-system, same pools) keeps its Metal objects by keeping the identity it had.
 */

/** What a tag value may hold: Metal tags are free text, but one value in a shell or a URL should not need quoting. */
const IDENTITY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** Refuses an identity that would make a confusing tag; returns it unchanged otherwise. */
export function validateClusterIdentity(value: string, source: string): string {
  if (!IDENTITY_PATTERN.test(value)) {
    throw new Error(
      `${source}: ${JSON.stringify(value)} is not a valid cluster identity (1-63 of A-Z a-z 0-9 . _ -, starting with a letter or digit)`,
    );
  }
  return value;
}

/**
 * Reads the kube-system Namespace's UID, once, at start: the default identity on Metal tags, and
 * always the stamp on the pools this cluster allocates from (pool/pool-ownership.ts), which must
 * differ between the two clusters of a move even when --cluster-identity is the same on both.
 * Fails with what to grant when it cannot.
 */
export async function readClusterIdentity(client: KubeClient): Promise<string> {
  let uid: string | undefined;
  try {
    uid = (await client.get(builtinTypes.namespace, { name: 'kube-system' }))?.metadata.uid;
  } catch (err: unknown) {
    if (isForbidden(err)) {
      throw new Error(
        'read the management cluster identity: get namespaces/kube-system is forbidden; grant it (the chart does: the pools are stamped with its UID)',
        { cause: err },
      );
    }
    throw err;
  }
  if (uid === undefined || uid === '') {
    throw new Error('read the management cluster identity: the API server has no kube-system Namespace');
  }
  return validateClusterIdentity(uid, 'the kube-system Namespace UID');
}
