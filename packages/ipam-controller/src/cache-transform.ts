import {
  CAPI_CORE_GROUP,
  CapiAnnotations,
  CapiLabels,
  IpamAnnotations,
  type IPAddress,
  type IPAddressBlock,
  type IPAddressClaim,
} from '@metal-l2/api';
import type { ObjectKey } from '@metal-l2/kube';

// What the caches keep of claims, IPAddresses and blocks: the fields the reconcilers read
// (claim-view.ts, claim-status.ts, claim-writes.ts, uncached-claims.ts, watches.ts), nothing else,
// as controller-runtime's cache TransformFunc does. A /16 holds 65,534 of each; as parsed off the
// wire a claim and its IPAddress cost ~3.6 KB of heap, most of it the claim's name (up to 253
// characters) parsed again in every place it occurs (the claim's name and addressRef, the
// IPAddress's name, claimRef and owner reference, the block entry): here each of those is the
// one string the claim's cached object holds. Unread fields (creationTimestamp, managedFields,
// other annotations and labels, other owners) are dropped, so a change to them alone wakes
// nothing either.

/** The claim's own name string as cached, so the other places that name it share it. */
export type ClaimNames = (key: ObjectKey) => string | undefined;

const CLAIM_ANNOTATIONS = [IpamAnnotations.requestedAddress, CapiAnnotations.paused] as const;

function pick(map: Readonly<Record<string, string>> | undefined, keys: readonly string[]): Record<string, string> | undefined {
  if (map === undefined) return undefined;
  let kept: Record<string, string> | undefined;
  for (const key of keys) {
    const value = map[key];
    if (value !== undefined) (kept ??= {})[key] = value;
  }
  return kept;
}

/** Absent values are left out (the objects are read with `?.` and `=== undefined`). */
function defined<T extends object>(obj: T): T {
  for (const key of Object.keys(obj) as (keyof T)[]) if (obj[key] === undefined) delete obj[key];
  return obj;
}

/** A claim as claim-view.ts and the status and finalizer writes read it. */
export function shapeClaim(claim: IPAddressClaim): IPAddressClaim {
  const meta = claim.metadata;
  const status = claim.status;
  const name = meta.name;
  const addressRef = status?.addressRef;
  return defined({
    apiVersion: claim.apiVersion,
    kind: claim.kind,
    metadata: defined({
      name,
      namespace: meta.namespace,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      generation: meta.generation,
      deletionTimestamp: meta.deletionTimestamp,
      finalizers: meta.finalizers,
      labels: pick(meta.labels, [CapiLabels.clusterName]),
      annotations: pick(meta.annotations, CLAIM_ANNOTATIONS),
      // The Cluster that owns the claim (claim-view.ts's clusterUid); other owners are not read.
      ownerReferences: meta.ownerReferences?.filter((o) => o.kind === 'Cluster' && o.apiVersion.startsWith(`${CAPI_CORE_GROUP}/`)),
    }),
    spec: claim.spec,
    ...(status === undefined
      ? {}
      : {
          status: defined({
            ...status,
            // Usually the claim's own name (an IPAddress is named after its claim).
            addressRef: addressRef === undefined ? undefined : { ...addressRef, name: addressRef.name === name ? name : addressRef.name },
          }),
        }),
  } as IPAddressClaim);
}

/** An IPAddress as the pool pass (addressView, uncached-claims.ts) and ensureIPAddress read it. */
export function shapeAddress(names: ClaimNames): (address: IPAddress) => IPAddress {
  return (address) => {
    const meta = address.metadata;
    const namespace = meta.namespace ?? '';
    const claimName = names({ namespace, name: address.spec.claimRef.name }) ?? address.spec.claimRef.name;
    const same = (name: string | undefined): string | undefined => (name === claimName ? claimName : name);
    return defined({
      apiVersion: address.apiVersion,
      kind: address.kind,
      metadata: defined({
        name: same(meta.name),
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
        deletionTimestamp: meta.deletionTimestamp,
        finalizers: meta.finalizers,
        // uncached-claims.ts: the controlling claim's owner reference tells a claim that left.
        ownerReferences: meta.ownerReferences
          ?.filter((o) => o.kind === 'IPAddressClaim' && o.controller === true)
          .map((o) => ({ ...o, name: same(o.name) ?? o.name })),
      }),
      spec: { ...address.spec, claimRef: { ...address.spec.claimRef, name: claimName } },
    } as IPAddress);
  };
}

/**
 * A block's entries name their claims (`name`, or `namespace/name` in a global pool's, either
 * with `@releasedAt` once released): an entry naming a cached claim as-is shares its name string.
 */
export function shapeBlock(names: ClaimNames): (block: IPAddressBlock) => IPAddressBlock {
  return (block) => {
    const allocations = block.status?.allocations;
    const namespace = block.spec.poolRef.namespace;
    if (allocations === undefined || namespace === undefined) return block;
    for (const address of Object.keys(allocations)) {
      const value = allocations[address];
      if (value === undefined || value.includes('@')) continue;
      const shared = names({ namespace, name: value });
      if (shared !== undefined) allocations[address] = shared;
    }
    return block;
  };
}
