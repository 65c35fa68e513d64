import type { IPAddress, IPPool } from '@metal-l2/api';
import type { Allocation, ResolvedPool } from '@metal-l2/ipam-core';
import type { ConditionInput } from '@metal-l2/kube';
import type { ClaimView } from '../claim/claim-contract.js';
import type { PoolBlocker } from './pool-status.js';
import type { PoolRef } from '../pool-ref.js';

/** The pool's Metal side as one pass sees it (pools with spec.vrf, or status.vrf left from one). */
export interface VrfView {
  /** VRFReady as the VRF steps found it, or 'keep' it as it is (status.vrf is theirs to write). */
  readonly write: { readonly condition: ConditionInput } | 'keep';
  /** The Metal Gateway's address, as of this pass: IPAddresses carry it when spec.gateway is unset. */
  readonly gatewayAddress?: string | undefined;
  /** False holds allocation back (blocker VRFNotReady), with this message. */
  readonly ready: boolean;
  readonly message: string;
  /** Never allocated: the Metal Gateway's address. */
  readonly reservedAddresses: readonly string[];
  readonly requeueAfterMs?: number | undefined;
}

/** What one pass over a pool found, before anything was written. */
export interface PoolScope {
  readonly ref: PoolRef;
  readonly pool: IPPool;
  /** The spec resolved, minus the addresses Metal reserves; undefined when the spec is invalid. */
  readonly resolved: ResolvedPool | undefined;
  readonly blocker: PoolBlocker | undefined;
  readonly vrf: VrfView | undefined;
  readonly allocations: readonly Allocation[];
  readonly claims: readonly ClaimView[];
  readonly addresses: readonly IPAddress[];
}
