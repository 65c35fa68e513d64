import { PoolEventReasons, PoolReasons } from '@metal-l2/api';
import type { AnyMetalGateway, MetalGatewayLite } from '@metal-l2/metal-api';
import { metalCallOrGone } from './metal-call.js';
import { addressOf, firstUsableAddress } from './subnet.js';
import { blocked, createRecorded, driftDetected, proceed, record, vrfStatusOf, type StepOutcome, type VrfScope } from './vrf-scope.js';
import { isCreated, withIntent, withResource, withoutResource } from './vrf-status.js';

/** How soon to look again at a gateway Metal is still deleting. */
const GATEWAY_DELETING_RECHECK_MS = 5_000;

/**
 * Postcondition: with spec.vrf.metalGateway, a Metal Gateway joins the reservation and the VLAN,
 * and status.vrf records its id and the address it takes (never allocated); without it, no
 * gateway this pool created remains. A gateway someone else put on the reservation is recorded
 * (its address is taken all the same) and left alone.
 *
 * Metal Gateways carry no tags, so whose a gateway is comes from status: one bound to a
 * reservation this pool created is the pool's; on an adopted reservation the pool writes
 * "MetalGateway" into status.vrf.created before the create call, so a crash between the call and
 * the write of its id still leaves the gateway recognisably the pool's.
 */
export async function ensureMetalGateway(scope: VrfScope): Promise<StepOutcome> {
  const reservation = scope.observed.reservation;
  if (reservation?.id === undefined) return blocked(PoolReasons.vrfError, 'internal: the gateway step ran without a reservation');
  const status = vrfStatusOf(scope);
  const existing = reservation.metal_gateway?.id === undefined ? undefined : reservation.metal_gateway;
  const isOurs = (gatewayID: string): boolean =>
    isCreated(status, 'Reservation') || (isCreated(status, 'MetalGateway') && (status.metalGatewayID ?? gatewayID) === gatewayID);

  if (scope.spec.metalGateway !== true) {
    if (existing?.id !== undefined && isOurs(existing.id) && isCreated(status, 'MetalGateway')) return removeGateway(scope, existing.id);
    if (existing?.id === undefined) {
      if (status.metalGatewayID !== undefined) await record(scope, (s) => withoutResource(s, 'MetalGateway'));
      return proceed;
    }
    return recordGateway(scope, existing, false);
  }

  if (existing?.id !== undefined) {
    if (existing.state === 'deleting') {
      return blocked(
        PoolReasons.vrfProvisioning,
        `Metal Gateway ${existing.id} on ${scope.subnet.text} is being deleted; waiting`,
        GATEWAY_DELETING_RECHECK_MS,
      );
    }
    return recordGateway(scope, existing, isOurs(existing.id));
  }
  if (status.metalGatewayID !== undefined) {
    return driftDetected(
      scope,
      'MetalGateway',
      `Metal Gateway ${status.metalGatewayID} of ${scope.subnet.text} is gone from Metal; creating it again`,
    );
  }

  const vlan = scope.observed.vlan;
  if (vlan?.id === undefined) return blocked(PoolReasons.invalidSpec, 'spec.vrf.metalGateway needs spec.vrf.vxlan');
  const address = addressOf(reservation.gateway) ?? firstUsableAddress(scope.subnet);
  if (scope.allocated.has(address)) {
    return blocked(
      PoolReasons.vrfConflict,
      `the Metal Gateway would take ${address}, which the pool has allocated to a claim; release that address (delete its claim) to let the gateway be created`,
    );
  }
  const vlanID = vlan.id;
  const taken = (gateway: AnyMetalGateway): string => addressOf(gateway.ip_reservation?.gateway) ?? address;
  const created = await createRecorded(scope, {
    kind: 'MetalGateway',
    what: `create Metal Gateway on VLAN ${vlan.vxlan ?? '?'} for ${scope.subnet.text}`,
    call: () =>
      scope.metal.metalGateways.create(scope.spec.projectID, { virtual_network_id: vlanID, ip_reservation_id: reservation.id ?? '' }),
    details: (gateway) => ({ gatewayAddress: taken(gateway) }),
    note: (gateway, id) => `Metal Gateway ${id} at ${taken(gateway)} on VLAN ${vlan.vxlan ?? '?'}`,
    beforeCreate: async () => {
      if (!isCreated(status, 'Reservation')) await record(scope, (s) => withIntent(s, 'MetalGateway'));
    },
  });
  return created.kind === 'settling' ? created.outcome : proceed;
}

async function recordGateway(scope: VrfScope, gateway: MetalGatewayLite, created: boolean): Promise<StepOutcome> {
  const id = gateway.id ?? '';
  const address = addressOf(gateway.gateway_address) ?? addressOf(scope.observed.reservation?.gateway) ?? firstUsableAddress(scope.subnet);
  await record(scope, (s) => withResource(s, 'MetalGateway', { id, created, details: { gatewayAddress: address } }));
  return proceed;
}

/** spec.vrf.metalGateway was turned off: the gateway this pool created goes. */
async function removeGateway(scope: VrfScope, id: string): Promise<StepOutcome> {
  await metalCallOrGone(`delete Metal Gateway ${id}`, () => scope.metal.metalGateways.delete(id));
  await record(scope, (s) => withoutResource(s, 'MetalGateway'));
  scope.events.push({
    type: 'Normal',
    reason: PoolEventReasons.metalResourceDeleted,
    message: `deleted Metal Gateway ${id} (spec.vrf.metalGateway is off)`,
  });
  return proceed;
}
