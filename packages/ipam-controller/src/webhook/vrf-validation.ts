import type { IPPool, VrfSpec } from '@metal-l2/api';
import { formatIssuePath, type IssuePathSegment, type ResolvedPool } from '@metal-l2/ipam-core';
import { jsonEqual } from '@metal-l2/kube';
import { credentialsSecretKey } from '../vrf/credentials.js';
import { isSubnetInRanges, poolSubnet, reservationSizeProblem } from '../vrf/subnet.js';

// spec.vrf rules the CRD schema cannot express. Adopted VRFs' ranges are known only to the
// controller (it reports them in VRFReady); everything checkable from the object is checked here.

export const VrfIssueCode = {
  /** The pool prefix is not a size Metal reserves in a VRF (/22-/29 IPv4, /64 IPv6). */
  ReservationSize: 'ReservationSize',
  /** The pool subnet is not inside spec.vrf.create.ipRanges. */
  SubnetOutsideVrf: 'SubnetOutsideVRF',
  /** A namespaced pool names a credentials Secret of another namespace. */
  CredentialsNamespace: 'CredentialsNamespace',
  /** A field that places the pool in Metal changed after its Metal resources were made. */
  Immutable: 'Immutable',
} as const;
export type VrfIssueCode = (typeof VrfIssueCode)[keyof typeof VrfIssueCode];

export interface VrfIssue {
  readonly code: VrfIssueCode;
  /** Relative to spec. */
  readonly path: readonly IssuePathSegment[];
  readonly message: string;
}

/** `spec.vrf.create.ipRanges: message`, as the API server formats field errors. */
export function formatVrfIssues(issues: readonly VrfIssue[]): string {
  return issues.map((i) => `${formatIssuePath(i.path, { root: 'spec' })}: ${i.message}`).join('; ');
}

export function validateVrf(pool: IPPool, resolved: ResolvedPool): VrfIssue[] {
  const vrf = pool.spec.vrf;
  if (vrf === undefined) return [];
  const issues: VrfIssue[] = [];
  const subnet = poolSubnet(resolved);
  const size = reservationSizeProblem(subnet);
  if (size !== undefined) issues.push({ code: VrfIssueCode.ReservationSize, path: ['prefix'], message: size });
  const ranges = vrf.create?.ipRanges;
  if (ranges !== undefined && !isSubnetInRanges(subnet, ranges)) {
    issues.push({
      code: VrfIssueCode.SubnetOutsideVrf,
      path: ['vrf', 'create', 'ipRanges'],
      message: `the pool subnet ${subnet.text} must lie inside one of the VRF ranges [${ranges.join(', ')}]`,
    });
  }
  const namespace = pool.metadata.namespace;
  const located = credentialsSecretKey(
    {
      kind: pool.kind,
      ...(pool.kind === 'InClusterIPPool' && namespace !== undefined ? { namespace } : {}),
      name: pool.metadata.name ?? '',
    },
    vrf,
    // A global pool without a namespace in its ref is the controller's concern (its flag), not the user's.
    'controller',
  );
  if (located.kind === 'invalid')
    issues.push({ code: VrfIssueCode.CredentialsNamespace, path: ['vrf', 'credentialsSecretRef', 'namespace'], message: located.message });
  return issues;
}

/**
 * Once a pool has Metal resources (status.vrf names some), what places it in Metal is fixed:
 * changing the project, metro, VRF, VLAN or subnet would strand what it created there, where no
 * finalizer would ever find it. spec.vrf.metalGateway and the credentials may change.
 */
export function validateVrfUpdate(oldPool: IPPool, newPool: IPPool, resolved: ResolvedPool): VrfIssue[] {
  const status = oldPool.status?.vrf;
  const hasMetalResources =
    status !== undefined && [status.vrfID, status.vlanID, status.reservationID, status.metalGatewayID].some((id) => id !== undefined);
  const before = oldPool.spec.vrf;
  if (!hasMetalResources || before === undefined) return [];
  const after = newPool.spec.vrf;
  const fixed = 'cannot change once the pool has Metal resources (status.vrf); delete the pool and create a new one instead';
  if (after === undefined)
    return [
      {
        code: VrfIssueCode.Immutable,
        path: ['vrf'],
        message: `cannot be removed once the pool has Metal resources (status.vrf): delete the pool instead, so that it deletes what it created`,
      },
    ];
  const issues: VrfIssue[] = [];
  const fields: readonly (keyof VrfSpec)[] = ['projectID', 'metro', 'vrfID', 'create', 'vxlan'];
  for (const field of fields) {
    if (!jsonEqual(before[field], after[field])) issues.push({ code: VrfIssueCode.Immutable, path: ['vrf', field], message: fixed });
  }
  const subnet = poolSubnet(resolved).text;
  if (status.subnet !== undefined && status.subnet !== subnet) {
    issues.push({
      code: VrfIssueCode.Immutable,
      path: ['addresses'],
      message: `the pool subnet is reserved in Metal as ${status.subnet} and cannot become ${subnet}`,
    });
  }
  return issues;
}
