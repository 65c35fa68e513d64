import type { CapiIpamVersion, ClaimReason, Condition, IPAddressClaim, V1Beta1Condition } from '@metal-l2/api';

/** What the provider says about a claim: bound to an address, or waiting for a reason. */
export type ClaimOutcome =
  | { readonly kind: 'bound'; readonly addressName: string; readonly address: string }
  | { readonly kind: 'waiting'; readonly reason: Exclude<ClaimReason, 'AddressAllocated'>; readonly message: string };

export interface ClaimStatusPatch {
  readonly status: { addressRef?: { name: string }; conditions: (Condition | V1Beta1Condition)[] };
}

/**
 * The status a claim should have for an outcome, or undefined when it already has it (so steady
 * state writes nothing). Only the Ready condition is ours; other conditions are kept as they are,
 * and lastTransitionTime moves only when the status flips.
 */
export function claimStatusPatch(
  claim: IPAddressClaim,
  outcome: ClaimOutcome,
  options: { version: CapiIpamVersion; now: Date },
): ClaimStatusPatch | undefined {
  const existing = claim.status?.conditions ?? [];
  const current = existing.find((c) => c.type === 'Ready');
  const status: 'True' | 'False' = outcome.kind === 'bound' ? 'True' : 'False';
  const reason = outcome.kind === 'bound' ? 'AddressAllocated' : outcome.reason;
  const message = outcome.kind === 'bound' ? `address ${outcome.address} allocated` : outcome.message;
  const addressName = outcome.kind === 'bound' ? outcome.addressName : undefined;

  const sameCondition = current?.status === status && current.reason === reason && (current.message ?? '') === message;
  const sameAddress =
    (claim.status?.addressRef?.name ?? undefined) === addressName ||
    (addressName === undefined && claim.status?.addressRef?.name === undefined);
  if (sameCondition && sameAddress) return undefined;

  const lastTransitionTime = current !== undefined && current.status === status ? current.lastTransitionTime : formatTime(options.now);
  const ready: Condition | V1Beta1Condition =
    options.version === 'v1beta2'
      ? {
          type: 'Ready',
          status,
          reason,
          message,
          lastTransitionTime,
          ...(claim.metadata.generation === undefined ? {} : { observedGeneration: claim.metadata.generation }),
        }
      : {
          type: 'Ready',
          status,
          reason,
          message,
          lastTransitionTime,
          ...(status === 'False' ? { severity: reason === 'PoolExhausted' || reason === 'PoolStatusFull' ? 'Warning' : 'Error' } : {}),
        };
  const conditions = [ready, ...existing.filter((c) => c.type !== 'Ready')];
  // An address, once given, is only taken away on deletion: a waiting outcome never clears it.
  const addressRef = addressName === undefined ? claim.status?.addressRef?.name : addressName;
  return { status: { ...(addressRef === undefined ? {} : { addressRef: { name: addressRef } }), conditions } };
}

/** Kubernetes timestamps have second precision. */
export function formatTime(now: Date): string {
  return new Date(Math.floor(now.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
