import { PoolReasons } from '@metal-l2/api';
import type { AnyIPReservation, VrfIpReservation } from '@metal-l2/metal-api';
import { metalCall, metalCallOrGone } from './metal-call.js';
import { createdFor, describeForeign, ownerTags, ownershipOf } from './ownership.js';
import { isSameSubnet } from './subnet.js';
import { blocked, createRecorded, driftDetected, proceed, record, vrfStatusOf, type StepOutcome, type VrfScope } from './vrf-scope.js';
import { withResource } from './vrf-status.js';

/** Reservations come with their Metal Gateway expanded, so the gateway step needs no call of its own. */
const WITH_GATEWAY = { include: ['metal_gateway'] } as const;

/**
 * Postcondition: the pool subnet is reserved in the VRF (an IP reservation of type vrf) and
 * status.vrf.reservationID names it. Looked for by recorded id, then among the VRF's reservations
 * by network (skipped for a VRF created in this pass: it holds none), and reserved only then.
 */
export async function ensureReservation(scope: VrfScope): Promise<StepOutcome> {
  const vrf = scope.observed.vrf;
  const vrfID = vrf?.id;
  if (vrfID === undefined) return blocked(PoolReasons.vrfError, 'internal: the reservation step ran without a VRF');
  const { subnet } = scope;

  const recorded = vrfStatusOf(scope).reservationID;
  if (recorded !== undefined) {
    const reservation = await metalCallOrGone(`read reservation ${recorded} of ${subnet.text} in VRF ${vrfID}`, () =>
      scope.metal.ipReservations.getInVrf(vrfID, recorded, WITH_GATEWAY),
    );
    if (reservation === undefined) {
      return driftDetected(
        scope,
        'Reservation',
        `reservation ${recorded} of ${subnet.text} in VRF ${vrfID} is gone from Metal; reserving the subnet again`,
      );
    }
    if (!isSameSubnet(subnet, reservation)) {
      return blocked(
        PoolReasons.vrfConflict,
        `reservation ${recorded} holds ${reservation.network ?? '?'}/${reservation.cidr ?? '?'}, but the pool subnet is ${subnet.text}; the subnet of a VRF-backed pool cannot change`,
      );
    }
    return found(scope, reservation);
  }

  if (!scope.createdNow.has('VRF')) {
    const listed = await metalCall(`list reservations of VRF ${vrfID}`, () => scope.metal.ipReservations.listInVrf(vrfID, WITH_GATEWAY));
    const existing = listed.find((r) => isSameSubnet(subnet, r));
    if (existing?.id !== undefined) {
      const id = existing.id;
      const ownership = ownershipOf(existing.tags, scope.owner);
      // Another management cluster hands out addresses from that subnet: sharing it would duplicate them.
      if (ownership.kind === 'otherCluster') {
        const foreign = describeForeign(`reservation ${id} of ${subnet.text} in VRF ${vrfID}`, ownership, scope.owner) ?? '';
        return blocked(PoolReasons.vrfConflict, foreign);
      }
      // A legacy-tagged one is used but, whose it is being unknown, never deleted with the pool.
      await record(scope, (s) =>
        withResource(s, 'Reservation', { id, created: ownership.kind === 'ours', details: { subnet: subnet.text } }),
      );
      return found(scope, existing);
    }
  }
  const what = `reserve ${subnet.text} in VRF ${vrfID}`;
  const created = await createRecorded(scope, {
    kind: 'Reservation',
    what,
    call: async () =>
      asVrfReservation(
        await scope.metal.ipReservations.create(
          scope.spec.projectID,
          {
            type: 'vrf',
            vrf_id: vrfID,
            network: subnet.network,
            cidr: subnet.cidr,
            details: createdFor(scope.ref),
            tags: ownerTags(scope.owner),
          },
          WITH_GATEWAY,
        ),
        what,
      ),
    details: () => ({ subnet: subnet.text }),
    note: (_reservation, id) => `reservation ${id} of ${subnet.text} in VRF ${vrfID}`,
  });
  return created.kind === 'settling' ? created.outcome : found(scope, created.value);
}

function found(scope: VrfScope, reservation: VrfIpReservation): StepOutcome {
  scope.observed.reservation = reservation;
  return proceed;
}

function asVrfReservation(reservation: AnyIPReservation, what: string): VrfIpReservation {
  if (reservation.type === 'vrf') return reservation;
  // Metal answered a VRF request with another kind of block: a broken invariant, not a user error.
  throw new Error(`${what}: Metal answered with a reservation of type ${String(reservation.type)}`);
}
