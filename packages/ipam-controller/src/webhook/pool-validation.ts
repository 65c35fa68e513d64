import { IpamAnnotations, type IPPool } from '@metal-l2/api';
import { describePool } from '../pool-ref.js';
import { overlappingPools } from '../pool/pool-overlap.js';
import { formatVrfIssues, validateVrf, validateVrfUpdate, type VrfIssue } from './vrf-validation.js';
import {
  IssueCode,
  decodeAllocations,
  findAddressesOutsidePool,
  formatAddress,
  formatClaimRef,
  formatIssues,
  parseAddress,
  resolvePoolSpec,
  type Address,
  type Issue,
} from '@metal-l2/ipam-core';

/** The webhook's answer: allowed, or denied with one message listing every problem. */
export type Verdict = { readonly allowed: true } | { readonly allowed: false; readonly message: string };

const allow: Verdict = { allowed: true };

function deny(issues: readonly Issue[], vrfIssues: readonly VrfIssue[] = []): Verdict {
  if (issues.length === 0 && vrfIssues.length === 0) return allow;
  const parts = [issues.length === 0 ? '' : formatIssues(issues, { root: 'spec' }), formatVrfIssues(vrfIssues)].filter((p) => p !== '');
  return { allowed: false, message: parts.join('; ') };
}

/** Spec rules the schema cannot express, and overlap with competing pools. */
export function validatePool(pool: IPPool, others: readonly IPPool[]): Verdict {
  const resolved = resolvePoolSpec(pool.spec);
  if (!resolved.ok) return deny(resolved.issues);
  const issues = overlappingPools(pool, resolved.pool, others).map((o) => o.issue);
  return deny(issues, validateVrf(pool, resolved.pool));
}

function activeAllocations(pool: IPPool): { address: string; claim: string }[] {
  return decodeAllocations(pool.status?.allocations ?? {})
    .allocations.filter((a) => a.releasedAt === undefined)
    .map((a) => ({ address: a.address, claim: formatClaimRef(a.claim) }));
}

export function validatePoolUpdate(oldPool: IPPool, newPool: IPPool, others: readonly IPPool[]): Verdict {
  const base = validatePool(newPool, others);
  if (!base.allowed) return base;
  const resolved = resolvePoolSpec(newPool.spec);
  if (!resolved.ok) return deny(resolved.issues);
  // Everything status holds, released-in-grace included: shrinking must not drop any of it.
  const held = decodeAllocations(oldPool.status?.allocations ?? {})
    .allocations.map((a) => parseAddress(a.address))
    .filter((a): a is Address => a !== undefined);
  const outside = findAddressesOutsidePool(resolved.pool, held);
  const issues: Issue[] = [];
  if (outside.length > 0) {
    const shown = outside.slice(0, 10).map(formatAddress);
    issues.push({
      code: IssueCode.AllocatedAddressOutsidePool,
      path: ['addresses'],
      message: `pool addresses do not contain allocated addresses: [${shown.join(', ')}]${outside.length > 10 ? ` and ${outside.length - 10} more` : ''}`,
    });
  }
  if (activeAllocations(oldPool).length > 0 && vrfKey(oldPool) !== vrfKey(newPool)) {
    return {
      allowed: false,
      message: `spec.vrf: the pool has allocated addresses, so it cannot move to another VRF, project or metro; release them first`,
    };
  }
  return deny(issues, validateVrfUpdate(oldPool, newPool, resolved.pool));
}

function vrfKey(pool: IPPool): string {
  const vrf = pool.spec.vrf;
  return vrf === undefined ? '' : `${vrf.projectID}/${vrf.metro}/${vrf.vrfID ?? `create:${vrf.create?.name ?? ''}`}`;
}

/** A pool in use may not be deleted; the message names the claims holding its addresses. */
export function validatePoolDelete(pool: IPPool): Verdict {
  if (pool.metadata.annotations?.[IpamAnnotations.skipValidateDelete] !== undefined) return allow;
  const active = activeAllocations(pool);
  if (active.length === 0) return allow;
  const claims = active.slice(0, 10).map((a) => `${a.claim} (${a.address})`);
  const more = active.length > 10 ? ` and ${active.length - 10} more` : '';
  return {
    allowed: false,
    message: `${describePool(pool)} has ${active.length} addresses allocated, to claims ${claims.join(', ')}${more}; delete those claims first, or annotate the pool with ${IpamAnnotations.skipValidateDelete} to skip this check`,
  };
}
