import {
  MachineNetworkEventReasons,
  NetworkAnnotations,
  PacketMachineType,
  type IPAddressClaim,
  type MachineNetwork,
  type OwnerReference,
  type PacketMachine,
} from '@metal-l2/api';
import { failed, isNotFound, proceed, type StepOutcome, waitFor } from '@metal-l2/kube';
import { IndexNames, MACHINE_NETWORK_LABEL } from '../context.js';
import { wantedClaims } from './claim-names.js';
import { assignedRecord, injectedRecord } from './durable-record.js';
import { keptRecordOf } from './kept-claims.js';
import { describe, type MachineNetworkScope } from './scope.js';

// A MachineNetwork deleted while its PacketMachine lives (`kubectl delete machinenetwork`) does not
// take the server's network with it (DESIGN §3.3 step 7): its VLANs stay on the device, its claims
// (so its addresses) pass to the PacketMachine, and the record of which VLANs are ours goes onto the
// PacketMachine. The controller then creates a new MachineNetwork, which adopts the claims back,
// takes the record, and reads the device before it says the ports are configured.

/** The MachineNetwork is going but its machine stays: keep the network rather than tear it down. */
export function machineOutlivesNetwork(scope: Pick<MachineNetworkScope, 'packetMachine' | 'machineNetwork'>): boolean {
  const pm = scope.packetMachine;
  if (pm === undefined || pm.metadata.deletionTimestamp !== undefined || pm.metadata.uid === undefined) return false;
  return (scope.machineNetwork.metadata.ownerReferences ?? []).some((o) => o.uid === pm.metadata.uid);
}

function packetMachineRef(pm: PacketMachine): OwnerReference {
  // Not the controller, and not blocking: the PacketMachine going (or its namespace) still lets
  // the garbage collector delete the claims, and the IPAM provider release the addresses.
  return {
    apiVersion: `${PacketMachineType.group}/${PacketMachineType.version}`,
    kind: PacketMachineType.kind,
    name: pm.metadata.name ?? '',
    uid: pm.metadata.uid ?? '',
  };
}

function machineNetworkRef(mn: MachineNetwork): OwnerReference {
  return {
    apiVersion: mn.apiVersion,
    kind: mn.kind,
    name: mn.metadata.name ?? '',
    uid: mn.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

async function setOwners(scope: MachineNetworkScope, claim: IPAddressClaim, owners: OwnerReference[]): Promise<void> {
  try {
    await scope.ctx.client.patch(
      scope.ctx.types.claim,
      { namespace: scope.namespace, name: claim.metadata.name ?? '' },
      { metadata: { ownerReferences: owners } },
      {
        ...(claim.metadata.resourceVersion === undefined ? {} : { resourceVersion: claim.metadata.resourceVersion }),
        signal: scope.rctx.signal,
      },
    );
  } catch (err: unknown) {
    if (!isNotFound(err)) throw new Error(`set the owners of IPAddressClaim ${describe(scope, claim.metadata.name)}`, { cause: err });
  }
}

/**
 * Postcondition: no claim is owned by this MachineNetwork any more (each is owned by the
 * PacketMachine instead), and the PacketMachine carries the assigned-VLANs record and what the
 * device booted with (status.userData), as the cache shows it. Nothing is called on the device and
 * nothing is released.
 */
export async function handOverNetwork(scope: MachineNetworkScope): Promise<StepOutcome> {
  const { ctx, machineNetwork: mn, packetMachine: pm } = scope;
  if (pm === undefined) return proceed;
  const uid = mn.metadata.uid;
  let moved = 0;
  let recorded = false;
  const claims = ctx.caches.claims.byIndex(IndexNames.claimByMachineNetwork, `${scope.namespace}/${scope.name}`);
  try {
    for (const claim of claims) {
      const owners = claim.metadata.ownerReferences ?? [];
      if (claim.metadata.deletionTimestamp !== undefined || !owners.some((o) => o.uid === uid)) continue;
      await setOwners(scope, claim, [...owners.filter((o) => o.uid !== uid && o.uid !== pm.metadata.uid), packetMachineRef(pm)]);
      moved++;
    }
    const records = { [NetworkAnnotations.assignedVlans]: assignedRecord(mn), [NetworkAnnotations.injectedConfig]: injectedRecord(mn) };
    if (Object.entries(records).some(([name, record]) => pm.metadata.annotations?.[name] !== record)) {
      const annotations = Object.fromEntries(Object.entries(records).map(([name, record]) => [name, record ?? null]));
      await ctx.client.patch(
        PacketMachineType,
        { namespace: scope.namespace, name: scope.name },
        { metadata: { annotations } },
        { signal: scope.rctx.signal },
      );
      recorded = true;
    }
  } catch (err: unknown) {
    return failed(new Error(`hand the network of ${describe(scope)} over to its PacketMachine`, { cause: err }));
  }
  // Said once, by the pass that moved the claims (or wrote the record of a machine without any):
  // a later pass over a stale PacketMachine writes the record again but finds the claims moved.
  const hasClaims = wantedClaims(scope.name, mn.spec).some((w) => ctx.caches.claims.get({ namespace: scope.namespace, name: w.name }));
  if (moved > 0 || (recorded && !hasClaims))
    ctx.events.event(pm, {
      type: 'Normal',
      reason: MachineNetworkEventReasons.networkKept,
      message: `MachineNetwork ${scope.name} was deleted while the machine lives: its VLANs stay on the device and its ${moved} address claim(s) pass to a new MachineNetwork`,
    });
  // The finalizer goes once the cache shows the record (the PacketMachine's update event brings it
  // back here): the new MachineNetwork is made from the cached PacketMachine and must find it.
  return recorded ? waitFor(1_000) : proceed;
}

/**
 * Postcondition: every claim of this machine that a deleted MachineNetwork handed over (owned by
 * the PacketMachine, or by nobody after an orphaning delete) is owned by this one again. A claim
 * owned by anything else, or kept for a former machine's device, is left for ensureClaims to report.
 */
export async function adoptClaims(scope: MachineNetworkScope): Promise<StepOutcome> {
  const { ctx, machineNetwork: mn, packetMachine: pm } = scope;
  if (pm === undefined || mn.metadata.uid === undefined) return proceed;
  let adopted = 0;
  for (const wanted of wantedClaims(scope.name, mn.spec)) {
    const claim = ctx.caches.claims.get({ namespace: scope.namespace, name: wanted.name });
    if (claim === undefined || claim.metadata.deletionTimestamp !== undefined) continue;
    if (claim.metadata.labels?.[MACHINE_NETWORK_LABEL] !== scope.name) continue;
    // Kept for the device of a machine deleted before (kept-claims.ts): that server may still use the address.
    if (keptRecordOf(claim) !== undefined) continue;
    const owners = claim.metadata.ownerReferences ?? [];
    if (owners.some((o) => o.controller === true) || owners.some((o) => o.kind === mn.kind && o.uid !== mn.metadata.uid)) continue;
    try {
      await setOwners(scope, claim, [...owners.filter((o) => o.uid !== pm.metadata.uid), machineNetworkRef(mn)]);
    } catch (err: unknown) {
      return failed(err);
    }
    adopted++;
  }
  if (adopted === 0) return proceed;
  scope.rctx.logger.info('adopted the address claims of a deleted MachineNetwork', { count: adopted });
  // The claims' watch events bring the adopted versions into the cache the next steps read.
  return waitFor(1_000);
}

/** The records a deleted MachineNetwork left on its PacketMachine (its VLANs, what the device booted with), for the new one's annotations. */
export function handedOverRecord(pm: PacketMachine): Record<string, string> {
  const records: Record<string, string> = {};
  for (const name of [NetworkAnnotations.assignedVlans, NetworkAnnotations.injectedConfig]) {
    const record = pm.metadata.annotations?.[name];
    if (record !== undefined) records[name] = record;
  }
  return records;
}
