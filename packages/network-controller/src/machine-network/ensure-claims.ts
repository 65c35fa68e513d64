import {
  CAPI_IPAM_GROUP,
  CapiLabels,
  MachineNetworkConditionTypes,
  MachineNetworkEventReasons,
  MachineNetworkReasons,
  type IPAddressClaim,
  type MachineNetwork,
} from '@metal-l2/api';
import { failed, isAlreadyExists, isKubeApiError, proceed, type StepOutcome, waitFor } from '@metal-l2/kube';
import { MACHINE_NETWORK_LABEL } from '../context.js';
import { nameLabelValue, wantedClaims, type WantedClaim } from './claim-names.js';
import { keptRecordOf } from './kept-claims.js';
import { describe, type MachineNetworkScope, markCondition } from './scope.js';

function ownedBy(claim: IPAddressClaim, mn: MachineNetwork): boolean {
  return (claim.metadata.ownerReferences ?? []).some((o) => o.controller === true && o.uid === mn.metadata.uid);
}

function claimObject(scope: MachineNetworkScope, wanted: WantedClaim): IPAddressClaim {
  const mn = scope.machineNetwork;
  return {
    apiVersion: `${CAPI_IPAM_GROUP}/${scope.ctx.versions.ipam}`,
    kind: 'IPAddressClaim',
    metadata: {
      name: wanted.name,
      namespace: scope.namespace,
      labels: {
        // The owner reference says which MachineNetwork; the label (shortened to fit) lets the
        // informer watch only our claims.
        [MACHINE_NETWORK_LABEL]: nameLabelValue(mn.metadata.name ?? scope.name),
        // Read from the PacketMachine's own label, so it fits already.
        ...(scope.clusterName === undefined ? {} : { [CapiLabels.clusterName]: scope.clusterName }),
      },
      ownerReferences: [
        {
          apiVersion: mn.apiVersion,
          kind: mn.kind,
          name: mn.metadata.name ?? scope.name,
          uid: mn.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    // v1beta1 (CAPI ≤ 1.9) claims have no clusterName: the API server prunes it there.
    spec: { poolRef: { ...wanted.poolRef }, ...(scope.clusterName === undefined ? {} : { clusterName: scope.clusterName }) },
  };
}

/**
 * The API server said no (a quota, an admission policy, a validation rule): the condition carries
 * its words, so the user sees what to change instead of a claim that never appears.
 */
function refused(scope: MachineNetworkScope, wanted: WantedClaim, err: unknown): StepOutcome {
  markCondition(
    scope.machineNetwork,
    {
      type: MachineNetworkConditionTypes.addressesAllocated,
      status: 'False',
      reason: MachineNetworkReasons.claimRefused,
      message: `the API server refused to create IPAddressClaim ${describe(scope, wanted.name)}: ${isKubeApiError(err) ? err.message : String(err)}`,
    },
    scope.now,
  );
  return failed(new Error(`create IPAddressClaim ${describe(scope, wanted.name)}`, { cause: err }));
}

/**
 * Postcondition: one IPAddressClaim per (port, VLAN, pool entry) exists, owned by this
 * MachineNetwork, and status.claims records each of them (releases read that record, never the
 * template). A claim of that name owned by anything else is reported, never adopted.
 */
export async function ensureClaims(scope: MachineNetworkScope): Promise<StepOutcome> {
  const { ctx, machineNetwork: mn } = scope;
  const wanted = wantedClaims(scope.name, mn.spec);
  const status = (mn.status ??= {});
  status.claims = wanted.map((w) => ({ name: w.name, port: w.port, vxlan: w.vxlan, poolRef: { ...w.poolRef } }));
  let created = 0;
  for (const w of wanted) {
    let claim = ctx.caches.claims.get({ namespace: scope.namespace, name: w.name });
    if (claim === undefined) {
      try {
        await ctx.client.create(ctx.types.claim, claimObject(scope, w), { signal: scope.rctx.signal });
        created++;
        continue;
      } catch (err: unknown) {
        if (!isAlreadyExists(err)) return refused(scope, w, err);
        claim = await ctx.client.get<IPAddressClaim>(
          ctx.types.claim,
          { namespace: scope.namespace, name: w.name },
          { signal: scope.rctx.signal },
        );
        if (claim === undefined) return waitFor(1_000);
      }
    }
    if (!ownedBy(claim, mn)) {
      const kept = keptRecordOf(claim);
      markCondition(
        mn,
        {
          type: MachineNetworkConditionTypes.addressesAllocated,
          status: 'False',
          reason: MachineNetworkReasons.claimConflict,
          message:
            kept === undefined
              ? `IPAddressClaim ${describe(scope, w.name)} exists but is not owned by this MachineNetwork; delete or rename it`
              : `IPAddressClaim ${describe(scope, w.name)} is kept for device ${kept.deviceID} of a deleted machine of this name, whose server may still use its address; it goes once Metal says that device is gone, or delete it`,
        },
        scope.now,
      );
      return waitFor();
    }
  }
  if (created > 0) {
    ctx.events.event(mn, {
      type: 'Normal',
      reason: MachineNetworkEventReasons.claimsCreated,
      message: `created ${created} IPAddressClaim(s)`,
    });
    scope.rctx.logger.info('created address claims', { count: created });
  }
  return proceed;
}
