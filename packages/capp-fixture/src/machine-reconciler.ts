// The one piece of the CAPI v1.7 Machine controller the flow depends on
// (internal/controllers/machine/machine_controller_phases.go, reconcileInfrastructure and
// reconcileExternal): take ownership of the PacketMachine — but not while it or its Cluster is
// paused — mirror its readiness and failure into Machine status, and copy providerID once the
// PacketMachine is ready. Nothing else of the Machine controller is played.
import {
  CAPI_CORE_GROUP,
  PacketMachineType,
  machineType,
  type CapiCoreVersion,
  type Cluster,
  type Machine,
  type OwnerReference,
  type PacketMachine,
} from '@metal-l2/api';
import {
  PatchHelper,
  done,
  requeueAfter,
  type KubeClient,
  type ObjectKey,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '@metal-l2/kube';
import { CapiMachineLabels, EXTERNAL_READY_WAIT_MS } from './capp-api.js';
import { groupOf, groupOfApiVersion, isControlPlaneMachine, isPaused, refersToPacketMachine } from './capi-objects.js';
import type { FixtureInformers } from './informers.js';

export interface MachineReconcilerDeps {
  readonly client: KubeClient;
  readonly capiVersion: CapiCoreVersion;
  readonly informers: FixtureInformers;
}

/** Machine status as the fixture writes it, in either version. */
interface MachineStatus {
  infrastructureReady?: boolean;
  initialization?: { infrastructureProvisioned?: boolean };
  failureReason?: string;
  failureMessage?: string;
  addresses?: { type: string; address: string }[];
}

type MachineWithStatus = Machine & { status?: MachineStatus };

/**
 * removeOnCreateOwnerRefs: drops the owner references a MachineSet, or (for control-plane
 * Machines) the Cluster's control plane, put on the infrastructure machine when creating it.
 */
export function withoutOnCreateOwners(refs: readonly OwnerReference[], options: { cluster: Cluster; machine: Machine }): OwnerReference[] {
  const controlPlane = isControlPlaneMachine(options.machine) ? options.cluster.spec?.controlPlaneRef : undefined;
  return refs.filter((ref) => {
    const group = groupOfApiVersion(ref.apiVersion);
    if (group === CAPI_CORE_GROUP && ref.kind === 'MachineSet') return false;
    return !(controlPlane !== undefined && group === groupOf(controlPlane) && ref.kind === controlPlane.kind);
  });
}

/**
 * controllerutil.SetControllerReference: upserts the Machine as controller owner (matched by
 * group, kind and name); refuses when another object is already the controller.
 */
export function withControllerReference(
  refs: readonly OwnerReference[],
  options: { machine: Machine; apiVersion: string },
): OwnerReference[] {
  const { machine } = options;
  const name = machine.metadata.name ?? '';
  const sameOwner = (ref: OwnerReference): boolean =>
    groupOfApiVersion(ref.apiVersion) === CAPI_CORE_GROUP && ref.kind === 'Machine' && ref.name === name;
  const otherController = refs.find((ref) => ref.controller === true && !sameOwner(ref));
  if (otherController !== undefined) {
    throw new Error(`object is already owned by another ${otherController.kind} controller ${otherController.name}`);
  }
  const owner: OwnerReference = {
    apiVersion: options.apiVersion,
    kind: 'Machine',
    name,
    uid: machine.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
  const at = refs.findIndex(sameOwner);
  return at < 0 ? [...refs, owner] : refs.map((ref, i) => (i === at ? owner : ref));
}

export class MachineReconciler implements Reconciler {
  constructor(private readonly deps: MachineReconcilerDeps) {}

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const { informers, client, capiVersion } = this.deps;
    const { logger, signal } = ctx;
    const machine: MachineWithStatus | undefined = informers.machines.get(key);
    if (machine === undefined) return done();
    if (machine.metadata.deletionTimestamp !== undefined) {
      logger.debug('machine is being deleted; the fixture does not play Machine deletion');
      return done();
    }
    const namespace = key.namespace ?? '';
    const cluster = informers.clusters.get({ namespace, name: machine.spec.clusterName });
    if (cluster === undefined)
      throw new Error(`failed to get cluster "${machine.spec.clusterName}" for machine "${key.name}" in namespace "${namespace}"`);
    if (isPaused(cluster, machine)) {
      logger.info('Reconciliation is paused for this object');
      return done();
    }
    const ref = machine.spec.infrastructureRef;
    if (!refersToPacketMachine(ref)) {
      logger.debug('infrastructure reference is not a PacketMachine; the fixture does not play it', { kind: ref.kind });
      return done();
    }
    // The cache may not have a PacketMachine created a moment before its Machine; v1.7 would
    // wait 30 s for it (externalReadyWait), the fixture asks the API server once more first.
    const packetMachine =
      informers.packetMachines.get({ namespace, name: ref.name }) ??
      (await client.get<PacketMachine>(PacketMachineType, { namespace, name: ref.name }, { signal }));
    if (packetMachine === undefined) {
      logger.info('Could not find infrastructure machine, requeuing', { packetMachine: ref.name });
      return requeueAfter(EXTERNAL_READY_WAIT_MS);
    }
    // v1.7 returns here, before any owner reference is set (fixed in v1.9.0).
    if (isPaused(cluster, packetMachine)) {
      logger.info('External object referenced is paused', { packetMachine: ref.name });
      return done();
    }

    const owned = structuredClone(packetMachine);
    const refs = withoutOnCreateOwners(owned.metadata.ownerReferences ?? [], { cluster, machine });
    owned.metadata.ownerReferences = withControllerReference(refs, { machine, apiVersion: `${CAPI_CORE_GROUP}/${capiVersion}` });
    owned.metadata.labels = { ...owned.metadata.labels, [CapiMachineLabels.clusterName]: machine.spec.clusterName };
    const current = await PatchHelper.snapshot(PacketMachineType, packetMachine).patch(client, owned, { signal });
    if (current.metadata.resourceVersion !== packetMachine.metadata.resourceVersion)
      logger.info('set the Machine as controller owner of the PacketMachine', { packetMachine: ref.name });

    const next = structuredClone(machine);
    const ready = this.mirrorStatus(next, current);
    if (ready) {
      const providerID = current.spec.providerID ?? '';
      if (providerID === '')
        throw new Error(
          `retrieved empty Spec.ProviderID from infrastructure provider for Machine "${key.name}" in namespace "${namespace}"`,
        );
      next.spec.providerID = providerID;
    } else {
      logger.info('Waiting for infrastructure provider to create machine infrastructure and report status.ready', {
        packetMachine: ref.name,
      });
    }
    await PatchHelper.snapshot(machineType(capiVersion), machine).patch(client, next, { signal });
    return done();
  }

  /** Copies readiness, addresses and (v1beta1) the failure of the PacketMachine onto the Machine. */
  private mirrorStatus(machine: MachineWithStatus, packetMachine: PacketMachine): boolean {
    const pmStatus = packetMachine.status ?? {};
    const ready = pmStatus.ready === true;
    const status: MachineStatus = { ...machine.status };
    if (this.deps.capiVersion === 'v1beta1') {
      status.infrastructureReady = ready;
      if (pmStatus.failureReason !== undefined && pmStatus.failureReason !== '') status.failureReason = pmStatus.failureReason;
      if ((pmStatus.failureMessage ?? '') !== '') {
        status.failureMessage = `Failure detected from referenced resource ${packetMachine.apiVersion ?? ''}, Kind=PacketMachine with name "${packetMachine.metadata.name ?? ''}": ${pmStatus.failureMessage ?? ''}`;
      }
    } else {
      status.initialization = { ...status.initialization, infrastructureProvisioned: ready };
    }
    if (ready && pmStatus.addresses !== undefined) status.addresses = pmStatus.addresses;
    machine.status = status;
    return ready;
  }
}
