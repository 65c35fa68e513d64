import { PoolConditionTypes, VrfResourceKinds, type PoolVrfStatus, type VrfResourceKind } from '@metal-l2/api';
import type { ConditionInput } from '@metal-l2/kube';

// Pure edits of status.vrf: which id each Metal resource has, and which of them the pool created.

type IdField = 'vrfID' | 'vlanID' | 'reservationID' | 'metalGatewayID';

const ID_FIELDS: Readonly<Record<VrfResourceKind, IdField>> = {
  VRF: 'vrfID',
  VLAN: 'vlanID',
  Reservation: 'reservationID',
  MetalGateway: 'metalGatewayID',
};

/** Fields that describe a resource besides its id, cleared with it. */
const DETAIL_FIELDS: Readonly<Record<VrfResourceKind, readonly (keyof PoolVrfStatus)[]>> = {
  VRF: [],
  VLAN: ['vxlan'],
  Reservation: ['subnet'],
  MetalGateway: ['gatewayAddress'],
};

/** What disappears with a resource in Metal: a VRF takes its reservations, a reservation or VLAN its gateway. */
export const DEPENDENTS: Readonly<Record<VrfResourceKind, readonly VrfResourceKind[]>> = {
  VRF: ['Reservation', 'MetalGateway'],
  VLAN: ['MetalGateway'],
  Reservation: ['MetalGateway'],
  MetalGateway: [],
};

export function idOf(status: PoolVrfStatus | undefined, kind: VrfResourceKind): string | undefined {
  return status?.[ID_FIELDS[kind]];
}

export function isCreated(status: PoolVrfStatus | undefined, kind: VrfResourceKind): boolean {
  return status?.created?.includes(kind) ?? false;
}

/** `created` in creation order, so that equal sets always look equal (and a steady pool writes nothing). */
function withCreated(status: PoolVrfStatus, kind: VrfResourceKind, created: boolean): PoolVrfStatus {
  const set = new Set(status.created ?? []);
  if (created) set.add(kind);
  else set.delete(kind);
  const { created: _previous, ...rest } = status;
  const list = VrfResourceKinds.filter((k) => set.has(k));
  return list.length === 0 ? rest : { ...rest, created: list };
}

/** Records a resource: its id, its details, and whether this pool created it. */
export function withResource(
  status: PoolVrfStatus,
  kind: VrfResourceKind,
  resource: { readonly id: string; readonly created: boolean; readonly details?: Partial<PoolVrfStatus> },
): PoolVrfStatus {
  return withCreated({ ...status, ...resource.details, [ID_FIELDS[kind]]: resource.id }, kind, resource.created);
}

/** Marks a resource as this pool's before the call that creates it (see ensureMetalGateway). */
export function withIntent(status: PoolVrfStatus, kind: VrfResourceKind): PoolVrfStatus {
  return withCreated(status, kind, true);
}

/** Forgets a resource (deleted, or found gone), and with it whatever went along in Metal. */
export function withoutResource(
  status: PoolVrfStatus,
  kind: VrfResourceKind,
  options: { readonly withDependents?: boolean } = {},
): PoolVrfStatus {
  const kinds = options.withDependents === true ? [kind, ...DEPENDENTS[kind]] : [kind];
  let next: PoolVrfStatus = { ...status };
  for (const k of kinds) {
    const { [ID_FIELDS[k]]: _id, ...rest } = next;
    next = rest;
    for (const field of DETAIL_FIELDS[k]) delete next[field];
    next = withCreated(next, k, false);
  }
  return next;
}

/** Addresses the pool must never hand out because Metal uses them: the Metal Gateway's. */
export function reservedAddressesOf(status: PoolVrfStatus | undefined): string[] {
  return status?.gatewayAddress === undefined ? [] : [status.gatewayAddress];
}

export function vrfReadyCondition(input: { readonly ready: boolean; readonly reason: string; readonly message: string }): ConditionInput {
  return { type: PoolConditionTypes.vrfReady, status: input.ready ? 'True' : 'False', reason: input.reason, message: input.message };
}

/** The VRFReady message of a ready pool: every id a user may look for in the Metal console. */
export function describeReady(status: PoolVrfStatus): string {
  const parts = [`VRF ${status.vrfID ?? '?'}`];
  if (status.subnet !== undefined) parts.push(`subnet ${status.subnet} reserved (${status.reservationID ?? '?'})`);
  if (status.vxlan !== undefined) parts.push(`VLAN ${status.vxlan} (${status.vlanID ?? '?'})`);
  if (status.metalGatewayID !== undefined) parts.push(`Metal Gateway ${status.gatewayAddress ?? '?'} (${status.metalGatewayID})`);
  return parts.join(', ');
}
