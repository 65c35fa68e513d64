// The PacketMachine reconciler of CAPP v0.9.0 (controllers/packetmachine_controller.go), step for
// step: owner Machine → Cluster → pause → PacketCluster → finalizer → delete or create/observe the
// device; the PacketMachine is patched once at the end (scope.Close), after a summary of Ready.
import {
  PacketMachineType,
  deviceIdOf,
  type CapiCoreVersion,
  type Cluster,
  type Machine,
  type PacketCluster,
  type PacketMachine,
  type V1Beta1Condition,
} from '@metal-l2/api';
import {
  PatchHelper,
  builtinTypes,
  done,
  requeueAfter,
  type KubeClient,
  type KubeObject,
  type Logger,
  type ObjectKey,
  type ReconcileContext,
  type ReconcileResult,
  type Reconciler,
} from '@metal-l2/kube';
import { isMetalHttpError, type Device, type IPReservation, type MetalClient } from '@metal-l2/metal-api';
import {
  ACTIVE_DEVICE_STATE,
  CapiMachineLabels,
  MachineFailureReasons,
  PACKET_MACHINE_FINALIZER,
  PacketMachineConditionTypes,
  PacketMachineReasons,
  PendingDeviceStates,
  VipManagers,
} from './capp-api.js';
import {
  createBgpSession,
  createDevice,
  createIpAssignment,
  findIpReservationsFirstPage,
  findProjectDevicesFirstPage,
} from './capp-metal-calls.js';
import { clusterReservation, isExistingBgpSession, nilReservationPanic } from './vip-manager.js';
import { clusterKeyFromLabel, isClusterInfrastructureReady, isControlPlaneMachine, isPaused, ownerNameOfKind } from './capi-objects.js';
import {
  createDeviceInput,
  defaultCreateTags,
  deviceTags,
  hasAllTags,
  ipxeConflict,
  nodeAddresses,
  userDataValues,
} from './device-request.js';
import type { FixtureInformers } from './informers.js';
import { GoTemplateError, GoTemplateToolError } from './go-template.js';
import { setV1Beta1Condition, summarizeReady, type ConditionState } from './v1beta1-conditions.js';

const PROVIDER_ID_PREFIX = 'equinixmetal://';

interface NodeAddress {
  type: string;
  address: string;
}

export interface PacketMachineReconcilerDeps {
  readonly client: KubeClient;
  readonly metal: MetalClient;
  /** The Metal token: CAPP hands it to control-plane templates as apiKey. */
  readonly token: string;
  readonly capiVersion: CapiCoreVersion;
  readonly informers: FixtureInformers;
  /** Requeue while the device is queued or provisioning (CAPP: 10 s). */
  readonly pollIntervalMs: number;
  /** Requeue after a failed EIP assignment or BGP enablement (CAPP: 20 s). */
  readonly vipRetryIntervalMs: number;
  readonly renderTemplate: (text: string, data: Readonly<Record<string, string>>) => Promise<string>;
  readonly now: () => Date;
}

/** What one reconcile works on (CAPP's MachineScope). `packetMachine` is the copy being edited. */
interface MachineScope {
  packetMachine: PacketMachine;
  patchHelper: PatchHelper<PacketMachine>;
  readonly machine: Machine;
  readonly cluster: Cluster;
  readonly packetCluster: PacketCluster;
  readonly logger: Logger;
  readonly signal: AbortSignal;
}

function conditionsOf(pm: PacketMachine): V1Beta1Condition[] {
  return pm.status?.conditions ?? [];
}

function hasFinalizer(obj: KubeObject): boolean {
  return obj.metadata.finalizers?.includes(PACKET_MACHINE_FINALIZER) ?? false;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class PacketMachineReconciler implements Reconciler {
  constructor(private readonly deps: PacketMachineReconcilerDeps) {}

  async reconcile(key: ObjectKey, ctx: ReconcileContext): Promise<ReconcileResult> {
    const { informers } = this.deps;
    let logger = ctx.logger;
    const cached = informers.packetMachines.get(key);
    if (cached === undefined) {
      logger.debug('PacketMachine resource not found or already deleted');
      return done();
    }
    const namespace = key.namespace ?? '';

    const machineName = ownerNameOfKind(cached, 'Machine');
    if (machineName === undefined) {
      logger.info('Machine Controller has not yet set OwnerRef');
      return done();
    }
    const machine = informers.machines.get({ namespace, name: machineName });
    // util.GetOwnerMachine reads the Machine; NotFound is an error, so CAPP retries.
    if (machine === undefined) throw new Error(`failed to get owner machine ${namespace}/${machineName}: not found`);
    logger = logger.child({ machine: machineName });

    // util.GetClusterFromMetadata: a missing (or empty) label is ErrNoCluster, which CAPP returns,
    // so controller-runtime retries with backoff until the Machine controller sets the label.
    const clusterKey = clusterKeyFromLabel(machine);
    if (clusterKey === undefined) {
      logger.info('Machine is missing cluster label or cluster does not exist');
      throw new Error(`no "${CapiMachineLabels.clusterName}" label present`);
    }
    const cluster = informers.clusters.get(clusterKey);
    if (cluster === undefined)
      throw new Error(
        `Machine is missing cluster label or cluster does not exist: cluster ${clusterKey.namespace ?? ''}/${clusterKey.name}`,
      );
    logger = logger.child({ cluster: clusterKey.name });

    if (isPaused(cluster, cached)) {
      logger.info("PacketMachine or linked Cluster is marked as paused. Won't reconcile");
      return done();
    }

    const packetCluster = informers.packetClusters.get({ namespace, name: cluster.spec?.infrastructureRef?.name ?? '' });
    if (packetCluster === undefined) {
      logger.info('PacketCluster is not available yet');
      return done();
    }

    const packetMachine = structuredClone(cached);
    const scope: MachineScope = {
      packetMachine,
      patchHelper: PatchHelper.snapshot(PacketMachineType, packetMachine),
      machine,
      cluster,
      packetCluster,
      logger,
      signal: ctx.signal,
    };
    let result: ReconcileResult;
    try {
      result = await this.reconcileScope(scope);
    } catch (err: unknown) {
      // scope.Close runs on every return: the failure reason and conditions set before the error are kept.
      await this.close(scope).catch((closeErr: unknown) => logger.warn('failed to patch packetmachine', { err: errorMessage(closeErr) }));
      throw err;
    }
    await this.close(scope);
    return result;
  }

  private async reconcileScope(scope: MachineScope): Promise<ReconcileResult> {
    const pm = scope.packetMachine;
    const deleting = pm.metadata.deletionTimestamp !== undefined;
    // Add the finalizer first and return: its own update event brings the next reconcile.
    if (!deleting && !hasFinalizer(pm)) {
      pm.metadata.finalizers = [...(pm.metadata.finalizers ?? []), PACKET_MACHINE_FINALIZER];
      return done();
    }
    if (deleting) {
      await this.reconcileDelete(scope);
      return done();
    }
    return this.reconcileNormal(scope);
  }

  private async reconcileNormal(scope: MachineScope): Promise<ReconcileResult> {
    const { logger } = scope;
    logger.info('Reconciling PacketMachine');
    const status = scope.packetMachine.status ?? {};
    if (status.failureReason !== undefined || status.failureMessage !== undefined) {
      logger.info('Error state detected, skipping reconciliation');
      return done();
    }
    if (!isClusterInfrastructureReady(scope.cluster, this.deps.capiVersion)) {
      logger.info('Cluster infrastructure is not ready yet');
      this.mark(scope, { status: 'False', reason: PacketMachineReasons.waitingForClusterInfrastructure, severity: 'Info', message: '' });
      return done();
    }
    if ((scope.machine.spec.bootstrap.dataSecretName ?? '') === '') {
      logger.info('Bootstrap data secret is not yet available');
      this.mark(scope, { status: 'False', reason: PacketMachineReasons.waitingForBootstrapData, severity: 'Info', message: '' });
      return done();
    }

    let device = await this.deviceById(scope);
    device ??= await this.deviceByTags(scope);
    const endpointAddresses: NodeAddress[] = [];
    if (device === undefined) {
      // Avoid flickering between InstanceProvisionStarted and InstanceProvisionFailed on a persistent failure.
      const current = conditionsOf(scope.packetMachine).find((c) => c.type === PacketMachineConditionTypes.deviceReady);
      if (current?.reason !== PacketMachineReasons.instanceProvisionFailed) {
        this.mark(scope, { status: 'False', reason: PacketMachineReasons.instanceProvisionStarted, severity: 'Info', message: '' });
        await this.close(scope);
      }
      device = await this.createDevice(scope, endpointAddresses);
    }

    const pm = scope.packetMachine;
    pm.spec.providerID = `${PROVIDER_ID_PREFIX}${device.id ?? ''}`;
    const state = device.state ?? '';
    pm.status = { ...pm.status, instanceStatus: state };
    if (scope.packetCluster.spec.vipManager === VipManagers.kubeVip) await this.ensureNodeBgpEnabled(scope, device);
    pm.status.addresses = [...endpointAddresses, ...nodeAddresses(device)];

    let result: ReconcileResult;
    if (PendingDeviceStates.includes(state)) {
      logger.info('Machine instance is pending', { instanceID: pm.spec.providerID });
      pm.status.ready = false;
      result = requeueAfter(this.deps.pollIntervalMs);
    } else if (state === ACTIVE_DEVICE_STATE) {
      logger.info('Machine instance is active', { instanceID: pm.spec.providerID });
      // A failed EIP assignment returns before ready is set and before the location check.
      if (scope.packetCluster.spec.vipManager === VipManagers.cpem && !(await this.assignElasticIp(scope, device))) {
        return requeueAfter(this.deps.vipRetryIntervalMs);
      }
      pm.status.ready = true;
      this.mark(scope, { status: 'True' });
      result = done();
    } else {
      pm.status.ready = false;
      logger.info('Equinix Metal device state is undefined', { state, deviceID: pm.spec.providerID });
      pm.status.failureReason = MachineFailureReasons.updateMachineError;
      pm.status.failureMessage = `instance status "${state}" is unexpected`;
      this.mark(scope, { status: 'Unknown', reason: '', message: '' });
      result = done();
    }

    this.checkLocation(scope, device);
    return result;
  }

  /**
   * The facility/metro check after every observation (the status above is kept: scope.Close runs).
   * CAPP's metro message prints the machine's facility, not its metro; kept as it is.
   */
  private checkLocation(scope: MachineScope, device: Device): void {
    const { facility = '', metro = '' } = scope.packetMachine.spec;
    // Our client's Device type leaves the deprecated facility out; the API still returns it.
    const deviceFacility = (device as Device & { facility?: { code?: string } }).facility?.code ?? '';
    const deviceMetro = device.metro?.code ?? '';
    if (facility !== '' && facility !== deviceFacility) {
      throw new Error(`instance facility does not match machine facility: ${facility} != ${deviceFacility}`);
    }
    if (metro !== '' && metro !== deviceMetro) {
      throw new Error(`instance metro does not match machine metro: ${facility} != ${deviceMetro}`);
    }
  }

  /**
   * CPEM, device active: when the cluster's reservation has no assignment yet and the machine is a
   * control plane, assign its address to the device. The reservation is looked up for workers too
   * (and a nil one panics there as well). False when the assignment failed: CAPP logs it and
   * requeues without an error.
   */
  private async assignElasticIp(scope: MachineScope, device: Device): Promise<boolean> {
    const reservation = await this.endpointReservation(scope);
    if ((reservation.assignments ?? []).length > 0 || !isControlPlaneMachine(scope.machine)) return true;
    try {
      await createIpAssignment(this.deps.metal, device.id ?? '', reservation.address ?? '');
    } catch (err: unknown) {
      scope.logger.error('err assigining elastic ip to control plane. retrying...', { err: errorMessage(err) });
      return false;
    }
    scope.logger.info('assigned elastic ip', { deviceID: device.id, address: reservation.address });
    return true;
  }

  /** KUBE_VIP, every machine, every state: a BGP session on the device; failing is an error with a retry. */
  private async ensureNodeBgpEnabled(scope: MachineScope, device: Device): Promise<void> {
    try {
      await createBgpSession(this.deps.metal, device.id ?? '');
    } catch (err: unknown) {
      if (isMetalHttpError(err) && isExistingBgpSession(err.status, err.message)) return;
      throw new Error(`failed to enable bgp on machine ${scope.packetMachine.metadata.name ?? ''}: ${errorMessage(err)}`, { cause: err });
    }
  }

  /** The device recorded in providerID; a 404 or 403 there is a terminal UpdateMachineError, as in CAPP. */
  private async deviceById(scope: MachineScope): Promise<Device | undefined> {
    const id = deviceIdOf(scope.packetMachine);
    if (id === undefined) return undefined;
    try {
      return await this.deps.metal.devices.get(id);
    } catch (err: unknown) {
      if (isMetalHttpError(err, 404)) {
        this.fail(scope, { reason: MachineFailureReasons.updateMachineError, message: `failed to find device: ${errorMessage(err)}` });
        scope.logger.error('unable to find device', { deviceID: id });
        this.mark(scope, { status: 'False', reason: PacketMachineReasons.instanceNotFound, severity: 'Error', message: errorMessage(err) });
      } else if (isMetalHttpError(err, 403)) {
        this.fail(scope, { reason: MachineFailureReasons.updateMachineError, message: `device failed to provision: ${errorMessage(err)}` });
        scope.logger.error('device failed to provision', { deviceID: id });
        this.mark(scope, {
          status: 'False',
          reason: PacketMachineReasons.instanceProvisionFailed,
          severity: 'Error',
          message: errorMessage(err),
        });
      }
      throw err;
    }
  }

  /**
   * GetDeviceByTags: the first device carrying every default tag among the project's FIRST PAGE of
   * devices (no per_page: the API's default 10). A device further down is not found, so CAPP
   * creates another one.
   */
  private async deviceByTags(scope: MachineScope): Promise<Device | undefined> {
    const wanted = this.defaultTags(scope);
    let devices: Device[];
    try {
      devices = await findProjectDevicesFirstPage(this.deps.metal, scope.packetCluster.spec.projectID);
    } catch (err: unknown) {
      throw new Error(`error retrieving devices: ${errorMessage(err)}`, { cause: err });
    }
    return devices.find((device) => hasAllTags(device, wanted));
  }

  /**
   * GetIPByClusterIdentifier for the machine's cluster, as CAPP reads its result: the error is
   * ignored and a nil reservation panics (see clusterReservation).
   */
  private async endpointReservation(scope: MachineScope): Promise<IPReservation> {
    const clusterName = scope.cluster.metadata.name ?? '';
    const list = await findIpReservationsFirstPage(this.deps.metal, scope.packetCluster.spec.projectID);
    const reservation = clusterReservation(list, clusterName);
    if (reservation === undefined) throw nilReservationPanic(clusterName);
    return reservation;
  }

  private defaultTags(scope: MachineScope): string[] {
    return defaultCreateTags({
      namespace: scope.packetMachine.metadata.namespace ?? '',
      machineName: scope.machine.metadata.name ?? '',
      clusterName: scope.cluster.metadata.name ?? '',
    });
  }

  /** NewDevice plus CAPP's handling of its error: any failure is terminal (CreateMachineError). */
  private async createDevice(scope: MachineScope, endpointAddresses: NodeAddress[]): Promise<Device> {
    const name = scope.packetMachine.metadata.name ?? '';
    const reservationAddress = await this.controlPlaneEndpoint(scope, endpointAddresses);
    try {
      return await this.newDevice(scope, reservationAddress);
    } catch (err: unknown) {
      // The fixture's own tool failing (no Go toolchain) is not the machine's fault: retry.
      if (err instanceof GoTemplateToolError) throw err;
      const message = errorMessage(err);
      // CAPP retries only these two hardware-reservation answers; the simulator has no reservations.
      if (message.includes(' no available hardware reservations ') || message.includes('Server is not provisionable')) {
        throw new Error(`failed to create machine ${name}: ${message}`, { cause: err });
      }
      this.fail(scope, { reason: MachineFailureReasons.createMachineError, message: `failed to create machine ${name}: ${message}` });
      this.mark(scope, { status: 'False', reason: PacketMachineReasons.instanceProvisionFailed, severity: 'Error', message });
      throw new Error(`failed to create machine ${name}: ${message}`, { cause: err });
    }
  }

  /**
   * For a CPEM or kube-vip control plane, the cluster reservation's address (template data); while
   * it is unassigned it also heads the machine's addresses as an ExternalIP. Outside NewDevice, so
   * a panic here is retried, not a CreateMachineError.
   */
  private async controlPlaneEndpoint(scope: MachineScope, endpointAddresses: NodeAddress[]): Promise<string | undefined> {
    const vipManager = scope.packetCluster.spec.vipManager;
    if (!isControlPlaneMachine(scope.machine) || (vipManager !== VipManagers.cpem && vipManager !== VipManagers.kubeVip)) return undefined;
    const reservation = await this.endpointReservation(scope);
    if ((reservation.assignments ?? []).length === 0) endpointAddresses.push({ type: 'ExternalIP', address: reservation.address ?? '' });
    return reservation.address ?? '';
  }

  private async newDevice(scope: MachineScope, reservationAddress: string | undefined): Promise<Device> {
    const conflict = ipxeConflict(scope.packetMachine);
    if (conflict !== undefined) throw new Error(conflict);
    const raw = await this.rawBootstrapData(scope);
    const isControlPlane = isControlPlaneMachine(scope.machine);
    const values = userDataValues({
      machine: scope.machine,
      isControlPlane,
      token: this.deps.token,
      cluster: scope.cluster,
      packetCluster: scope.packetCluster,
      ...(reservationAddress === undefined ? {} : { reservationAddress }),
    });
    let userdata: string;
    try {
      userdata = await this.deps.renderTemplate(raw, values);
    } catch (err: unknown) {
      if (err instanceof GoTemplateError) {
        throw new Error(`error ${err.code === 'parse' ? 'parsing' : 'executing'} userdata template: ${err.goMessage}`, { cause: err });
      }
      throw err;
    }
    const input = createDeviceInput({
      packetMachine: scope.packetMachine,
      packetCluster: scope.packetCluster,
      tags: deviceTags(this.defaultTags(scope), isControlPlane),
      userdata,
    });
    const device = await createDevice(this.deps.metal, scope.packetCluster.spec.projectID, input);
    scope.logger.info('created device', { deviceID: device.id, hostname: input.hostname, metro: input.metro, plan: input.plan });
    return device;
  }

  /** GetRawBootstrapData: the Secret read live (CAPP's client bypasses its cache for Secrets), key `value`. */
  private async rawBootstrapData(scope: MachineScope): Promise<string> {
    const namespace = scope.packetMachine.metadata.namespace ?? '';
    const name = scope.machine.spec.bootstrap.dataSecretName ?? '';
    const pmName = scope.packetMachine.metadata.name ?? '';
    let secret: (KubeObject & { data?: Record<string, string> }) | undefined;
    try {
      secret = await this.deps.client.get<KubeObject & { data?: Record<string, string> }>(
        builtinTypes.secret,
        { namespace, name },
        { signal: scope.signal },
      );
    } catch (err: unknown) {
      throw new Error(
        `unable to retrieve bootstrap data from secret: failed to retrieve bootstrap data secret for PacketMachine ${namespace}/${pmName}: ${errorMessage(err)}`,
        { cause: err },
      );
    }
    if (secret === undefined) {
      throw new Error(
        `unable to retrieve bootstrap data from secret: failed to retrieve bootstrap data secret for PacketMachine ${namespace}/${pmName}: secrets "${name}" not found`,
      );
    }
    const value = secret.data?.['value'];
    if (value === undefined)
      throw new Error('unable to retrieve bootstrap data from secret: error retrieving bootstrap data: secret value key is missing');
    return Buffer.from(value, 'base64').toString('utf8');
  }

  private async reconcileDelete(scope: MachineScope): Promise<void> {
    const { logger } = scope;
    logger.info('Reconciling Delete PacketMachine');
    const id = deviceIdOf(scope.packetMachine);
    let device: Device | undefined;
    if (id === undefined) {
      device = await this.deviceByTags(scope);
      if (device === undefined) {
        logger.info('Server not found by tags, nothing left to do');
        this.removeFinalizer(scope);
        return;
      }
    } else {
      try {
        device = await this.deps.metal.devices.get(id);
      } catch (err: unknown) {
        if (isMetalHttpError(err, 404)) {
          logger.info('Server not found by id, nothing left to do');
          this.removeFinalizer(scope);
          return;
        }
        if (isMetalHttpError(err, 403)) {
          logger.info('Server appears to have failed provisioning, nothing left to do');
          this.removeFinalizer(scope);
          return;
        }
        throw new Error(`error retrieving machine status ${scope.packetMachine.metadata.name ?? ''}: ${errorMessage(err)}`, { cause: err });
      }
    }
    try {
      await this.deps.metal.devices.delete(device.id ?? '', { forceDelete: true });
    } catch (err: unknown) {
      throw new Error(`failed to delete the machine: ${errorMessage(err)}`, { cause: err });
    }
    logger.info('deleted device', { deviceID: device.id });
    this.removeFinalizer(scope);
  }

  private removeFinalizer(scope: MachineScope): void {
    const pm = scope.packetMachine;
    pm.metadata.finalizers = (pm.metadata.finalizers ?? []).filter((f) => f !== PACKET_MACHINE_FINALIZER);
  }

  private fail(scope: MachineScope, failure: { reason: string; message: string }): void {
    const pm = scope.packetMachine;
    pm.status = { ...pm.status, failureReason: failure.reason, failureMessage: failure.message };
  }

  private mark(scope: MachineScope, state: ConditionState): void {
    const pm = scope.packetMachine;
    pm.status = {
      ...pm.status,
      conditions: setV1Beta1Condition(conditionsOf(pm), { type: PacketMachineConditionTypes.deviceReady, state }, this.deps.now()),
    };
  }

  /**
   * scope.PatchObject: summarise Ready, then patch metadata+spec and status (guarded by the
   * resourceVersion read). Afterwards the scope continues from what the server returned.
   */
  private async close(scope: MachineScope): Promise<void> {
    const pm = scope.packetMachine;
    if (pm.status?.conditions !== undefined) pm.status.conditions = summarizeReady(conditionsOf(pm), this.deps.now());
    const current = await scope.patchHelper.patch(this.deps.client, pm, { signal: scope.signal });
    scope.packetMachine = structuredClone(current);
    scope.patchHelper = PatchHelper.snapshot(PacketMachineType, current);
  }
}
