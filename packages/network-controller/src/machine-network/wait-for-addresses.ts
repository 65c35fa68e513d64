import { proceed, type StepOutcome, waitFor } from '@metal-l2/kube';
import { MachineNetworkConditionTypes, MachineNetworkReasons, type AddressRecord, type IPAddressClaim } from '@metal-l2/api';
import { wantedClaims } from './claim-names.js';
import { type MachineNetworkScope, markCondition } from './scope.js';

function readyReason(claim: IPAddressClaim | undefined): { reason?: string; message?: string } {
  const ready = claim?.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready === undefined || ready.status === 'True') return {};
  return {
    ...(ready.reason === undefined ? {} : { reason: ready.reason }),
    ...(ready.message === undefined ? {} : { message: ready.message }),
  };
}

/**
 * Postcondition: every claim is bound and status.addresses lists each address (in spec order)
 * with its port, VLAN, prefix, gateway and claim. Until then the machine waits, and says for what:
 * an exhausted pool is named as such, so the user knows it is not the controller that is slow.
 */
export function waitForAddresses(scope: MachineNetworkScope): Promise<StepOutcome> {
  const { ctx, machineNetwork: mn } = scope;
  const records: AddressRecord[] = [];
  const waiting: string[] = [];
  let exhausted = false;
  for (const w of wantedClaims(scope.name, mn.spec)) {
    const claim = ctx.caches.claims.get({ namespace: scope.namespace, name: w.name });
    const addressName = claim?.status?.addressRef?.name;
    const address =
      addressName === undefined || addressName === ''
        ? undefined
        : ctx.caches.addresses.get({ namespace: scope.namespace, name: addressName });
    if (address === undefined || address.spec.claimRef.name !== w.name) {
      const why = readyReason(claim);
      if (why.reason === 'PoolExhausted') exhausted = true;
      waiting.push(
        `${w.name} (pool ${w.poolRef.kind}/${w.poolRef.name}${why.reason === undefined ? '' : `: ${why.reason}${why.message === undefined ? '' : `, ${why.message}`}`})`,
      );
      continue;
    }
    records.push({
      port: w.port,
      vxlan: w.vxlan,
      address: address.spec.address,
      prefix: address.spec.prefix,
      ...(address.spec.gateway === undefined || address.spec.gateway === '' ? {} : { gateway: address.spec.gateway }),
      claimName: w.name,
    });
  }
  const status = (mn.status ??= {});
  status.addresses = records;
  if (waiting.length > 0) {
    markCondition(
      mn,
      {
        type: MachineNetworkConditionTypes.addressesAllocated,
        status: 'False',
        reason: exhausted ? MachineNetworkReasons.poolExhausted : MachineNetworkReasons.waitingForAddresses,
        message: `${records.length} of ${records.length + waiting.length} addresses allocated; waiting for ${waiting.join('; ')}`,
      },
      scope.now,
    );
    return Promise.resolve(waitFor());
  }
  markCondition(
    mn,
    {
      type: MachineNetworkConditionTypes.addressesAllocated,
      status: 'True',
      reason: MachineNetworkReasons.addressesAllocated,
      message:
        records.length === 0 ? 'no addresses asked for' : records.map((r) => `${r.port}.${r.vxlan} ${r.address}/${r.prefix}`).join(', '),
    },
    scope.now,
  );
  return Promise.resolve(proceed);
}
