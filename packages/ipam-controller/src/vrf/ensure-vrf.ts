import { PoolReasons } from '@metal-l2/api';
import type { Vrf } from '@metal-l2/metal-api';
import { metalCall, metalCallOrGone } from './metal-call.js';
import { createdFor, describeForeign, ownerTags, ownershipOf } from './ownership.js';
import { isSubnetInRanges } from './subnet.js';
import { blocked, createRecorded, driftDetected, proceed, record, vrfStatusOf, type StepOutcome, type VrfScope } from './vrf-scope.js';
import { withResource } from './vrf-status.js';

/**
 * Postcondition: the pool's VRF exists in its project and metro, and status.vrf.vrfID names it.
 * An adopted VRF (spec.vrf.vrfID) is only read. A VRF to create is first looked for: by the id
 * status recorded, then by name among the project's VRFs in the metro carrying this pool's and this
 * management cluster's tags (created before a crash lost the status write), and created only when
 * neither finds it. A VRF of that name another management cluster made (or an untagged-cluster
 * one this pool's status does not record) is a conflict: never adopted, so never deleted.
 */
export async function ensureVrf(scope: VrfScope): Promise<StepOutcome> {
  const { spec } = scope;
  if (spec.vrfID !== undefined) return adoptVrf(scope, spec.vrfID);
  const create = spec.create;
  if (create === undefined) return blocked(PoolReasons.invalidSpec, 'spec.vrf needs vrfID or create');

  const recorded = vrfStatusOf(scope).vrfID;
  if (recorded !== undefined) {
    const vrf = await metalCallOrGone(`read VRF ${recorded}`, () => scope.metal.vrfs.get(recorded));
    if (vrf !== undefined) return found(scope, vrf);
    return driftDetected(scope, 'VRF', `VRF ${recorded} that this pool created is gone from Metal; creating it again`);
  }

  const where = `project ${spec.projectID} metro ${spec.metro}`;
  const listed = await metalCall(`list VRFs of ${where}`, () => scope.metal.vrfs.list(spec.projectID, { metro: spec.metro }));
  const sameName = listed.filter((v) => v.name === create.name);
  const ours = sameName.find((v) => ownershipOf(v.tags, scope.owner).kind === 'ours');
  if (ours?.id !== undefined) {
    const id = ours.id;
    await record(scope, (status) => withResource(status, 'VRF', { id, created: true }));
    return found(scope, ours);
  }
  for (const vrf of sameName) {
    const foreign = describeForeign(
      `the VRF ${create.name} (${vrf.id ?? '?'}) in ${where}`,
      ownershipOf(vrf.tags, scope.owner),
      scope.owner,
    );
    if (foreign !== undefined) return blocked(PoolReasons.vrfConflict, `${foreign}; choose another name in spec.vrf.create.name`);
  }
  if (sameName.length > 0) {
    const ids = sameName.map((v) => v.id ?? '?').join(', ');
    return blocked(
      PoolReasons.vrfConflict,
      `a VRF named ${create.name} already exists in ${where} (${ids}) and this pool did not create it: adopt it with spec.vrf.vrfID, or choose another name`,
    );
  }
  const created = await createRecorded(scope, {
    kind: 'VRF',
    what: `create VRF ${create.name} in ${where}`,
    call: () =>
      scope.metal.vrfs.create(spec.projectID, {
        name: create.name,
        metro: spec.metro,
        ip_ranges: [...create.ipRanges],
        ...(create.localASN === undefined ? {} : { local_asn: create.localASN }),
        description: createdFor(scope.ref),
        tags: ownerTags(scope.owner),
      }),
    note: (_vrf, id) => `VRF ${create.name} (${id}) with ranges ${create.ipRanges.join(', ')}`,
  });
  return created.kind === 'settling' ? created.outcome : found(scope, created.value);
}

async function adoptVrf(scope: VrfScope, vrfID: string): Promise<StepOutcome> {
  const vrf = await metalCallOrGone(`read VRF ${vrfID}`, () => scope.metal.vrfs.get(vrfID));
  if (vrf === undefined) return blocked(PoolReasons.vrfNotFound, `VRF ${vrfID} does not exist in Metal, or the token cannot see it`);
  // A token may reach several projects: a VRF of another one would fail later, less clearly.
  const project = vrf.project?.id;
  if (project !== undefined && project !== scope.spec.projectID) {
    return blocked(
      PoolReasons.vrfConflict,
      `VRF ${vrfID} belongs to project ${project}, not to spec.vrf.projectID ${scope.spec.projectID}`,
    );
  }
  const metro = vrf.metro?.code;
  if (metro !== undefined && metro !== scope.spec.metro) {
    return blocked(PoolReasons.vrfConflict, `VRF ${vrfID} is in metro ${metro}, not in spec.vrf.metro ${scope.spec.metro}`);
  }
  if (vrfStatusOf(scope).vrfID !== vrfID) await record(scope, (status) => withResource(status, 'VRF', { id: vrfID, created: false }));
  return found(scope, vrf);
}

function found(scope: VrfScope, vrf: Vrf): StepOutcome {
  scope.observed.vrf = vrf;
  return proceed;
}

/**
 * Postcondition: the pool subnet lies inside the VRF's ranges. For a VRF the pool creates the
 * webhook already checked spec.vrf.create.ipRanges; an adopted VRF's ranges are known only here.
 */
export function checkSubnetInVrf(scope: VrfScope): StepOutcome {
  const ranges = scope.observed.vrf?.ip_ranges ?? [];
  if (isSubnetInRanges(scope.subnet, ranges)) return proceed;
  const id = scope.observed.vrf?.id ?? '?';
  return blocked(
    PoolReasons.vrfSubnetOutside,
    `the pool subnet ${scope.subnet.text} is not inside the IP ranges of VRF ${id} (${ranges.length === 0 ? 'none' : ranges.join(', ')})`,
  );
}
