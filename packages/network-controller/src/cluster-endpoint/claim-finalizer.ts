import { ClusterEndpointEventReasons, ClusterEndpointFinalizers, type IPAddressClaim } from '@metal-l2/api';
import {
  finalizersWith,
  finalizersWithout,
  hasFinalizer,
  isConflict,
  isNotFound,
  writeFinalizers,
  type ReconcileContext,
} from '@metal-l2/kube';
import { endpointClaimName } from '../machine-network/claim-names.js';
import { addressUseOf, ownerCluster } from './address-in-use.js';
import type { EndpointContext } from './context.js';
import { boundAddress } from './endpoint-claim.js';
import { clusterHold } from '../hold.js';

// The endpoint claim carries our finalizer, so that no deletion (kubectl delete, owner garbage
// collection, our own when the Cluster gives the address up) lets the address go while it is in
// use (address-in-use.ts). Our IPAM provider keeps a deleting claim's address while a finalizer
// other than its own remains, so the address is never free in between.

/**
 * Merge patch of the whole list, guarded by the resourceVersion read: another finalizer written
 * meanwhile is never lost. False when the claim changed since (or went): its watch event brings
 * the claim back, read anew.
 */
async function writeClaimFinalizers(
  at: { ctx: EndpointContext; signal: AbortSignal },
  claim: IPAddressClaim,
  finalizers: readonly string[],
): Promise<boolean> {
  try {
    await writeFinalizers(at.ctx.client, { type: at.ctx.types.claim, object: claim, finalizers, signal: at.signal });
    return true;
  } catch (err: unknown) {
    if (isConflict(err) || isNotFound(err)) return false;
    throw new Error(`write the finalizers of IPAddressClaim ${claim.metadata.namespace ?? ''}/${claim.metadata.name ?? ''}`, {
      cause: err,
    });
  }
}

/**
 * Our finalizer on the key's endpoint claim, whatever became of its Cluster (gone, deleting, or a
 * new one of the same name): a live claim of the Cluster gets it (new claims are made with it;
 * this adds it to those of an earlier release), a deleting one loses it once its address is no
 * longer in use. A claim of a Cluster paused by someone else is left alone (clusterctl move
 * strips finalizers itself).
 */
export async function settleClaimFinalizer(
  ctx: EndpointContext,
  key: { namespace: string; name: string },
  rctx: ReconcileContext,
): Promise<void> {
  const claim = ctx.caches.claims.get({ namespace: key.namespace, name: endpointClaimName(key.name) });
  if (claim === undefined) return;
  const owner = ownerCluster(ctx.caches, claim);
  if (owner?.spec?.paused === true && !clusterHold.isHeldByUs(owner)) return;
  if (claim.metadata.deletionTimestamp !== undefined) {
    if (hasFinalizer(claim, ClusterEndpointFinalizers.endpointInUse)) await releaseDeletedClaim({ ctx, rctx, name: key.name }, claim);
    return;
  }
  const finalizers = finalizersWith(claim, ClusterEndpointFinalizers.endpointInUse);
  if (owner === undefined || finalizers === undefined) return;
  await writeClaimFinalizers({ ctx, signal: rctx.signal }, claim, finalizers);
}

/**
 * A deleting endpoint claim loses our finalizer once its address is no longer in use, or once it
 * has no address to keep (never bound, or its IPAM provider released it at the deletion, as
 * providers that ignore other finalizers do): holding it then would protect nothing.
 */
async function releaseDeletedClaim(
  at: { ctx: EndpointContext; rctx: ReconcileContext; name: string },
  claim: IPAddressClaim,
): Promise<void> {
  const { ctx, rctx } = at;
  const key = { namespace: claim.metadata.namespace ?? '', name: at.name };
  const address = boundAddress({ ctx, namespace: key.namespace }, claim)?.spec.address;
  if (address !== undefined) {
    const use = addressUseOf(ctx.caches, { claim, clusterName: key.name, address });
    if (use.inUse) {
      rctx.logger.debug('deleted endpoint claim kept: its address is in use', { address, announcers: use.announcers });
      return;
    }
  }
  const rest = finalizersWithout(claim, ClusterEndpointFinalizers.endpointInUse) ?? [];
  if (!(await writeClaimFinalizers({ ctx, signal: rctx.signal }, claim, rest))) return;
  ctx.events.event(claim, {
    type: 'Normal',
    reason: ClusterEndpointEventReasons.claimReleased,
    message:
      address === undefined
        ? 'the deleted endpoint claim has no address to keep: let go'
        : `${address} is no longer the Cluster's endpoint nor announced by any of its machines: the deleted endpoint claim is let go`,
  });
  rctx.logger.info('let a deleted endpoint claim go', { claim: claim.metadata.name, address: address ?? 'none' });
}
