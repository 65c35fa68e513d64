import type { VirtualNetwork } from '@metal-l2/metal-api';
import { metalCall, metalCallOrGone } from './metal-call.js';
import { createdFor, ownerTags, ownershipOf } from './ownership.js';
import { createRecorded, driftDetected, proceed, record, vrfStatusOf, type StepOutcome, type VrfScope } from './vrf-scope.js';
import { withResource } from './vrf-status.js';

/**
 * Postcondition: when spec.vrf.vxlan is set, a VLAN with that vxlan exists in the project and
 * metro and status.vrf.vlanID names it. An existing VLAN is used (and left alone on deletion
 * unless it carries this pool's and this management cluster's tags); an absent one is created.
 */
export async function ensureVlan(scope: VrfScope): Promise<StepOutcome> {
  const { spec } = scope;
  const vxlan = spec.vxlan;
  if (vxlan === undefined) return proceed;

  const status = vrfStatusOf(scope);
  if (status.vlanID !== undefined && status.vxlan === vxlan) {
    const recorded = status.vlanID;
    const vlan = await metalCallOrGone(`read VLAN ${vxlan} (${recorded})`, () => scope.metal.virtualNetworks.get(recorded));
    if (vlan !== undefined) return found(scope, vlan);
    return driftDetected(scope, 'VLAN', `VLAN ${vxlan} (${recorded}) is gone from Metal; creating it again`);
  }

  const where = `project ${spec.projectID} metro ${spec.metro}`;
  const listed = await metalCall(`list VLANs of ${where}`, () => scope.metal.virtualNetworks.list(spec.projectID, { metro: spec.metro }));
  const existing = listed.find((v) => v.vxlan === vxlan);
  if (existing?.id !== undefined) {
    const id = existing.id;
    // Used either way; deleted with the pool only when this cluster's controller made it for this pool.
    const created = ownershipOf(existing.tags, scope.owner).kind === 'ours';
    await record(scope, (s) => withResource(s, 'VLAN', { id, created, details: { vxlan } }));
    return found(scope, existing);
  }
  const created = await createRecorded(scope, {
    kind: 'VLAN',
    what: `create VLAN ${vxlan} in ${where}`,
    call: () =>
      scope.metal.virtualNetworks.create(spec.projectID, {
        metro: spec.metro,
        vxlan,
        description: createdFor(scope.ref),
        tags: ownerTags(scope.owner),
      }),
    details: () => ({ vxlan }),
    note: (_vlan, id) => `VLAN ${vxlan} (${id}) in ${where}`,
  });
  return created.kind === 'settling' ? created.outcome : found(scope, created.value);
}

function found(scope: VrfScope, vlan: VirtualNetwork): StepOutcome {
  scope.observed.vlan = vlan;
  return proceed;
}
