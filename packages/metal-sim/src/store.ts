// The simulator's state: every object, the seed, ids, time and address pools, and the device
// lifecycle. Request handlers (routes/*) and port actions (port-actions.ts) decide what changes and
// rules whether it may; the change itself goes through a method here, which also tells listeners,
// so no caller can change state and forget to say so. The store refuses nothing the docs state: it
// holds, indexes and notifies.

import type { CancelTask, SimClock } from './clock.js';
import type { IdGenerator } from './ids.js';
import { AddressPools, type PoolName } from './address-pools.js';
import { unknownKeysProblem } from './known-keys.js';
import { containsCidr, parseCidr, type AddressFamily, type Cidr } from './ip-math.js';
import type {
  BatchState,
  BgpConfig,
  BgpSession,
  Device,
  DeviceEvent,
  DeviceState,
  IpAssignment,
  IpReservation,
  MetalGateway,
  Metro,
  OperatingSystem,
  Plan,
  Port,
  Project,
  TokenGrant,
  VirtualNetwork,
  VlanAssignmentBatch,
  Vrf,
} from './models.js';
import { bondNetworkType, deviceNetworkType, type BondShape, type NetworkType } from './network-type.js';
import { DEFAULT_SEED, type SeedConfig } from './seed.js';

const DEFAULT_OPERATING_SYSTEMS = DEFAULT_SEED.operatingSystems ?? [];

/** How long the state machines take. All in simulated time (the store's clock). */
export interface SimDelays {
  /** queued -> provisioning. */
  readonly deviceQueuedMs: number;
  /** provisioning -> active. */
  readonly deviceProvisioningMs: number;
  /**
   * A deleted device: deprovisioning -> gone (404). 0 removes it within the DELETE call, as a
   * simulator without deprovisioning would.
   */
  readonly deviceDeprovisioningMs: number;
  /** A VLAN assignment batch: queued -> in_progress. */
  readonly batchQueuedMs: number;
  /** A VLAN assignment batch: in_progress -> completed (or failed). */
  readonly batchInProgressMs: number;
}

export const DEFAULT_DELAYS: SimDelays = {
  deviceQueuedMs: 1_000,
  deviceProvisioningMs: 4_000,
  deviceDeprovisioningMs: 3_000,
  batchQueuedMs: 200,
  batchInProgressMs: 800,
};

/** A change a test or the data-plane harness may follow (a VLAN assigned becomes a bridge VLAN). */
export type StoreChange =
  | { readonly kind: 'device'; readonly action: 'created' | 'state' | 'updated' | 'deleted'; readonly deviceId: string }
  | { readonly kind: 'port'; readonly action: 'updated'; readonly portId: string; readonly deviceId: string }
  | { readonly kind: 'batch'; readonly action: 'created' | 'state'; readonly batchId: string; readonly portId: string }
  | {
      readonly kind: 'virtual-network' | 'vrf' | 'ip-reservation' | 'metal-gateway';
      readonly action: 'created' | 'updated' | 'deleted';
      readonly id: string;
    };

export type StoreListener = (change: StoreChange) => void;

/** The kinds whose changes carry a plain `id`. */
type ObjectKind = Extract<StoreChange, { readonly id: string }>['kind'];

interface EventInput {
  readonly type: string;
  readonly state: string;
  readonly body: string;
  readonly interpolated?: string;
}

/** Fields a PUT may change; undefined (left out of the body) leaves the field as it is. */
export type Patch<T> = { [K in keyof T]?: T[K] | undefined };

/** What `updateDevice` (PUT /devices/{id}) may change. */
export type DevicePatch = Patch<
  Pick<Device, 'hostname' | 'description' | 'userdata' | 'tags' | 'customdata' | 'locked' | 'networkFrozen' | 'billingCycle'>
>;

/** What `updateVrf` (PUT /vrfs/{id}) may change. */
export type VrfPatch = Patch<
  Pick<
    Vrf,
    | 'name'
    | 'description'
    | 'ipRanges'
    | 'localAsn'
    | 'tags'
    | 'bgpDynamicNeighborsEnabled'
    | 'bgpDynamicNeighborsExportRouteMap'
    | 'bgpDynamicNeighborsBfdEnabled'
  >
>;

export interface StoreOptions {
  readonly seed: SeedConfig;
  readonly ids: IdGenerator;
  readonly clock: SimClock;
  readonly delays?: Partial<SimDelays>;
}

export interface DeviceCreate {
  readonly projectId: string;
  readonly plan: Plan;
  readonly metro: Metro;
  readonly operatingSystem: OperatingSystem;
  readonly hostname: string | undefined;
  readonly description: string;
  readonly billingCycle: string;
  readonly userdata: string;
  readonly customdata: Record<string, unknown>;
  readonly tags: string[];
  readonly locked: boolean;
  readonly networkFrozen: boolean;
  readonly addresses: readonly AddressRequest[];
}

export interface AddressRequest {
  readonly family: AddressFamily;
  readonly public: boolean;
  readonly prefix: number;
}

export class SimulatorStore {
  readonly metros = new Map<string, Metro>();
  readonly plans = new Map<string, Plan>();
  readonly operatingSystems = new Map<string, OperatingSystem>();
  readonly projects = new Map<string, Project>();
  readonly tokens = new Map<string, TokenGrant>();
  readonly devices = new Map<string, Device>();
  readonly ports = new Map<string, Port>();
  readonly vlans = new Map<string, VirtualNetwork>();
  readonly vrfs = new Map<string, Vrf>();
  readonly reservations = new Map<string, IpReservation>();
  readonly gateways = new Map<string, MetalGateway>();
  /** By project id. */
  readonly bgpConfigs = new Map<string, BgpConfig>();
  readonly batches = new Map<string, VlanAssignmentBatch>();
  readonly delays: SimDelays;
  readonly clock: SimClock;
  readonly ids: IdGenerator;
  readonly vrfsPerProject: number;

  private readonly listeners = new Set<StoreListener>();
  private readonly osIds = new Map<string, string>();
  private readonly timers = new Set<CancelTask>();
  private readonly pools = new AddressPools();

  constructor(options: StoreOptions) {
    this.clock = options.clock;
    this.ids = options.ids;
    this.delays = checkDelays({ ...DEFAULT_DELAYS, ...options.delays });
    this.vrfsPerProject = options.seed.limits?.vrfsPerProject ?? 8;
    this.loadSeed(options.seed);
  }

  private loadSeed(seed: SeedConfig): void {
    for (const m of seed.metros) {
      const code = m.code.toLowerCase();
      this.metros.set(code, { id: m.id ?? this.ids.uuid(), code, name: m.name ?? code.toUpperCase(), country: m.country ?? 'US' });
    }
    for (const p of seed.plans) {
      this.plans.set(p.slug, { id: p.id ?? this.ids.uuid(), slug: p.slug, name: p.name ?? p.slug, portCount: p.ports });
    }
    for (const o of seed.operatingSystems ?? DEFAULT_OPERATING_SYSTEMS) {
      const [distro = o.slug, ...version] = o.slug.split('_');
      this.operatingSystems.set(o.slug, {
        slug: o.slug,
        name: o.name ?? o.slug,
        distro: o.distro ?? distro,
        version: o.version ?? version.join('.'),
      });
    }
    for (const p of seed.projects) {
      const project: Project = { id: p.id ?? this.ids.uuid(), name: p.name, createdAt: this.nowIso() };
      this.projects.set(project.id, project);
    }
    for (const t of seed.tokens) {
      const grant: TokenGrant = {
        token: t.token,
        projectIds: t.projects === undefined ? 'all' : new Set(t.projects.map((ref) => this.projectByRef(ref).id)),
      };
      this.tokens.set(t.token, grant);
    }
  }

  private projectByRef(ref: string): Project {
    const found = this.projects.get(ref) ?? [...this.projects.values()].find((p) => p.name === ref);
    if (found === undefined) throw new Error(`seed: token refers to unknown project ${ref}`);
    return found;
  }

  nowIso(): string {
    return new Date(this.clock.now()).toISOString();
  }

  /** Follows changes; returns the unsubscribe function. */
  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(change: StoreChange): void {
    for (const l of this.listeners) l(change);
  }

  /** Schedules a state-machine step; close() cancels what has not run. */
  schedule(delayMs: number, task: () => void): void {
    const cancel = this.clock.schedule(delayMs, () => {
      this.timers.delete(cancel);
      task();
    });
    this.timers.add(cancel);
  }

  /** Stops every pending lifecycle and batch step. */
  close(): void {
    for (const cancel of this.timers) cancel();
    this.timers.clear();
    this.listeners.clear();
  }

  // ------------------------------------------------------------------ lookups

  /** A stable id per operating system slug (the API's OperatingSystem.id is a UUID). */
  operatingSystemId(slug: string): string {
    let id = this.osIds.get(slug);
    if (id === undefined) {
      id = this.ids.uuid();
      this.osIds.set(slug, id);
    }
    return id;
  }

  /** A device's operating system; the catalogue is fixed at start, so a device's slug is always in it. */
  operatingSystemOf(device: Device): OperatingSystem {
    const os = this.operatingSystems.get(device.operatingSystem);
    if (os === undefined) throw new Error(`internal: device ${device.id} has unknown operating system ${device.operatingSystem}`);
    return os;
  }

  projectByName(name: string): Project | undefined {
    return [...this.projects.values()].find((p) => p.name === name);
  }

  metroByRef(ref: string): Metro | undefined {
    const lower = ref.toLowerCase();
    return this.metros.get(lower) ?? [...this.metros.values()].find((m) => m.id === ref);
  }

  metroOf(code: string): Metro {
    const m = this.metros.get(code);
    if (m === undefined) throw new Error(`internal: unknown metro ${code}`);
    return m;
  }

  devicePorts(device: Device): Port[] {
    return device.portIds.map((id) => this.portOf(id));
  }

  portOf(id: string): Port {
    const p = this.ports.get(id);
    if (p === undefined) throw new Error(`internal: unknown port ${id}`);
    return p;
  }

  deviceOfPort(port: Port): Device {
    const d = this.devices.get(port.deviceId);
    if (d === undefined) throw new Error(`internal: port ${port.id} has no device`);
    return d;
  }

  /** The bond port a physical port belongs to (itself for a bond port). */
  bondOf(port: Port): Port {
    if (port.kind === 'bond') return port;
    const bond = this.devicePorts(this.deviceOfPort(port)).find((p) => p.kind === 'bond' && p.name === port.bondName);
    if (bond === undefined) throw new Error(`internal: port ${port.name} has no bond ${port.bondName}`);
    return bond;
  }

  bondMembers(bond: Port): Port[] {
    return this.devicePorts(this.deviceOfPort(bond)).filter((p) => p.kind === 'physical' && p.bondName === bond.name);
  }

  /** The API's `network_type` for a bond port. */
  networkTypeOf(bond: Port): NetworkType {
    return bondNetworkType(this.bondShape(bond));
  }

  private bondShape(bond: Port): BondShape {
    return { layer2: bond.layer2, membersBonded: this.bondMembers(bond).map((m) => m.bonded), bondVlanCount: bond.vlans.length };
  }

  /** The device's `network_type`: over every bond (bond0 and, on 4-port plans, bond1). */
  deviceNetworkType(device: Device): NetworkType {
    return deviceNetworkType(
      this.devicePorts(device)
        .filter((p) => p.kind === 'bond')
        .map((b) => this.bondShape(b)),
    );
  }

  /** bond0: the bond that carries the management addresses (and so the metadata service's reach). */
  addressBond(device: Device): Port {
    const bond0 = this.devicePorts(device).find((p) => p.kind === 'bond');
    if (bond0 === undefined) throw new Error(`internal: device ${device.id} has no bond`);
    return bond0;
  }

  vlanOf(id: string): VirtualNetwork {
    const v = this.vlans.get(id);
    if (v === undefined) throw new Error(`internal: unknown virtual network ${id}`);
    return v;
  }

  /** Ports (of any device) that carry the VLAN. */
  portsWithVlan(vlanId: string): Port[] {
    return [...this.ports.values()].filter((p) => p.vlans.some((a) => a.vlanId === vlanId));
  }

  gatewaysOfVlan(vlanId: string): MetalGateway[] {
    return [...this.gateways.values()].filter((g) => g.vlanId === vlanId);
  }

  gatewayOfReservation(reservationId: string): MetalGateway | undefined {
    return [...this.gateways.values()].find((g) => g.ipReservationId === reservationId);
  }

  openBatches(filter: { readonly portId?: string; readonly vlanId?: string }): VlanAssignmentBatch[] {
    return [...this.batches.values()].filter(
      (b) =>
        (b.state === 'queued' || b.state === 'in_progress') &&
        (filter.portId === undefined || b.portId === filter.portId) &&
        (filter.vlanId === undefined || b.items.some((i) => i.vlanId === filter.vlanId)),
    );
  }

  // ------------------------------------------------------------------ devices

  createDevice(input: DeviceCreate): Device {
    // Taken first so the OS's id does not depend on when a device is first rendered.
    this.operatingSystemId(input.operatingSystem.slug);
    const id = this.ids.uuid();
    const shortId = id.slice(0, 8);
    const now = this.nowIso();
    const portIds = this.createPorts(id, input.plan);
    const device: Device = {
      id,
      shortId,
      projectId: input.projectId,
      planSlug: input.plan.slug,
      metroCode: input.metro.code,
      operatingSystem: input.operatingSystem.slug,
      createdAt: now,
      hostname: input.hostname ?? `sim-${shortId}`,
      description: input.description,
      billingCycle: input.billingCycle,
      userdata: input.userdata,
      customdata: input.customdata,
      tags: input.tags,
      locked: input.locked,
      networkFrozen: input.networkFrozen,
      state: 'queued',
      updatedAt: now,
      portIds,
      ipAssignments: [],
      bgpSessions: [],
      events: [],
      switchUuid: this.ids.uuid(),
    };
    device.ipAssignments = this.allocateAddresses(input.addresses);
    this.devices.set(id, device);
    this.pushEvent(device, { type: 'instance.created', state: 'succeeded', body: 'Device created and queued for provisioning' });
    this.emit({ kind: 'device', action: 'created', deviceId: id });
    this.schedule(this.delays.deviceQueuedMs, () => {
      if (this.devices.get(id) !== device || device.state !== 'queued') return;
      this.setDeviceState(device, 'provisioning');
      this.schedule(this.delays.deviceProvisioningMs, () => {
        if (this.devices.get(id) !== device || device.state !== 'provisioning') return;
        this.setDeviceState(device, 'active');
      });
    });
    return device;
  }

  /** 2-port plans: bond0 = eth0+eth1. 4-port plans: bond0 = eth0+eth2, bond1 = eth1+eth3. */
  private createPorts(deviceId: string, plan: Plan): string[] {
    const layout: Record<string, string> =
      plan.portCount === 2 ? { eth0: 'bond0', eth1: 'bond0' } : { eth0: 'bond0', eth1: 'bond1', eth2: 'bond0', eth3: 'bond1' };
    const bonds = [...new Set(Object.values(layout))].map((name) => ({ name, kind: 'bond' as const, bondName: name }));
    const physical = Object.entries(layout).map(([name, bondName]) => ({ name, kind: 'physical' as const, bondName }));
    // Bonds first, then eth0..: ids and MACs come from one seeded sequence, so this order is what
    // keeps a seed's ids the same from run to run.
    return [...bonds, ...physical].map(({ name, kind, bondName }) => {
      const port: Port = {
        id: this.ids.uuid(),
        deviceId,
        name,
        kind,
        bondName,
        mac: kind === 'physical' ? this.ids.mac() : undefined,
        bonded: true,
        layer2: false,
        vlans: [],
        nativeVlanId: undefined,
      };
      this.ports.set(port.id, port);
      return port.id;
    });
  }

  setDeviceState(device: Device, state: DeviceState): void {
    device.state = state;
    device.updatedAt = this.nowIso();
    const body =
      state === 'provisioning'
        ? 'Provisioning started'
        : state === 'active'
          ? 'Provisioning completed'
          : state === 'deprovisioning'
            ? 'Deprovisioning started'
            : `Device is ${state}`;
    this.pushEvent(device, { type: `provisioning.${state}`, state: 'succeeded', body });
    this.emit({ kind: 'device', action: 'state', deviceId: device.id });
  }

  /** An event the host reports (user state, phone-home): the device's events change, so listeners hear of it. */
  recordDeviceEvent(device: Device, e: EventInput): DeviceEvent {
    const event = this.pushEvent(device, e);
    this.emit({ kind: 'device', action: 'updated', deviceId: device.id });
    return event;
  }

  private pushEvent(device: Device, e: EventInput): DeviceEvent {
    const event: DeviceEvent = {
      id: this.ids.uuid(),
      type: e.type,
      state: e.state,
      body: e.body,
      interpolated: e.interpolated ?? e.body,
      createdAt: this.nowIso(),
    };
    device.events.push(event);
    return event;
  }

  /** Sets the fields the patch gives (an undefined field stays as it was). */
  updateDevice(device: Device, patch: DevicePatch): void {
    assignDefined(device, patch);
    this.deviceUpdated(device);
  }

  addIpAssignment(device: Device, assignment: IpAssignment): void {
    device.ipAssignments = [...device.ipAssignments, assignment];
    this.deviceUpdated(device);
  }

  setBgpConfig(config: BgpConfig): void {
    this.bgpConfigs.set(config.projectId, config);
  }

  addBgpSession(device: Device, session: BgpSession): void {
    device.bgpSessions = [...device.bgpSessions, session];
    this.deviceUpdated(device);
  }

  removeIpAssignment(device: Device, assignmentId: string): void {
    device.ipAssignments = device.ipAssignments.filter((a) => a.id !== assignmentId);
    this.deviceUpdated(device);
  }

  private deviceUpdated(device: Device): void {
    device.updatedAt = this.nowIso();
    this.emit({ kind: 'device', action: 'updated', deviceId: device.id });
  }

  /**
   * The spec: "When an instance is deleted, it will move to `deprovisioning` state until the
   * deprovision is completed". Its open batches fail at once (the device will not be configured
   * again); it keeps its ports, VLANs and addresses until it is gone, when its ports go with it.
   */
  deleteDevice(device: Device): void {
    for (const port of this.devicePorts(device)) {
      for (const batch of this.openBatches({ portId: port.id })) this.setBatchState(batch, 'failed', ['the device was deleted']);
    }
    if (this.delays.deviceDeprovisioningMs === 0) {
      this.removeDevice(device);
      return;
    }
    this.setDeviceState(device, 'deprovisioning');
    this.schedule(this.delays.deviceDeprovisioningMs, () => {
      if (this.devices.get(device.id) === device) this.removeDevice(device);
    });
  }

  private removeDevice(device: Device): void {
    for (const port of this.devicePorts(device)) this.ports.delete(port.id);
    this.devices.delete(device.id);
    device.state = 'deleted';
    this.emit({ kind: 'device', action: 'deleted', deviceId: device.id });
  }

  // ------------------------------------------------------------------ ports and batches

  /**
   * Port fields change in port-actions.ts, after every rule there passed; this records the change:
   * the device's updatedAt moves and listeners hear of each port (a bond and its members alike).
   */
  portsChanged(ports: readonly Port[]): void {
    const device = ports[0] === undefined ? undefined : this.devices.get(ports[0].deviceId);
    if (device !== undefined) device.updatedAt = this.nowIso();
    for (const p of ports) this.emit({ kind: 'port', action: 'updated', portId: p.id, deviceId: p.deviceId });
  }

  addBatch(batch: VlanAssignmentBatch): void {
    this.batches.set(batch.id, batch);
    this.emit({ kind: 'batch', action: 'created', batchId: batch.id, portId: batch.portId });
  }

  /** Moves a batch on; a failed batch says why in `errorMessages`. */
  setBatchState(batch: VlanAssignmentBatch, state: BatchState, errorMessages?: readonly string[]): void {
    batch.state = state;
    if (errorMessages !== undefined) batch.errorMessages = [...errorMessages];
    batch.updatedAt = this.nowIso();
    this.emit({ kind: 'batch', action: 'state', batchId: batch.id, portId: batch.portId });
  }

  // ------------------------------------------------------------------ virtual networks, VRFs, reservations, gateways

  addVirtualNetwork(vlan: VirtualNetwork): void {
    this.put('virtual-network', this.vlans, vlan);
  }

  updateVirtualNetwork(vlan: VirtualNetwork, patch: Patch<Pick<VirtualNetwork, 'description' | 'tags'>>): void {
    assignDefined(vlan, patch);
    this.emit({ kind: 'virtual-network', action: 'updated', id: vlan.id });
  }

  deleteVirtualNetwork(vlan: VirtualNetwork): void {
    this.drop('virtual-network', this.vlans, vlan);
  }

  addVrf(vrf: Vrf): void {
    this.put('vrf', this.vrfs, vrf);
  }

  /**
   * Spec (VrfUpdateInput.ip_ranges): removing a range "will result in the deletion of any VRF IP
   * Reservations contained within the IP Range, as well as the VRF IP Reservation's associated Metal
   * Gateways". Ranges are checked by the caller (rules/vrf-ip-ranges).
   */
  updateVrf(vrf: Vrf, patch: VrfPatch): void {
    if (patch.ipRanges !== undefined) {
      const kept = patch.ipRanges.map(parseCidr).filter((c) => c !== undefined);
      for (const r of this.reservationsOfVrf(vrf.id)) if (!kept.some((k) => containsCidr(k, r))) this.deleteReservation(r);
    }
    assignDefined(vrf, patch);
    vrf.updatedAt = this.nowIso();
    this.emit({ kind: 'vrf', action: 'updated', id: vrf.id });
  }

  /** The spec lists no 422 for deleting a VRF: its reservations and their gateways go with it. */
  deleteVrf(vrf: Vrf): void {
    for (const r of this.reservationsOfVrf(vrf.id)) this.deleteReservation(r);
    this.drop('vrf', this.vrfs, vrf);
  }

  reservationsOfVrf(vrfId: string): IpReservation[] {
    return [...this.reservations.values()].filter((r) => r.vrfId === vrfId);
  }

  addReservation(r: IpReservation): void {
    this.put('ip-reservation', this.reservations, r);
  }

  /** A reservation's Metal Gateway goes with it (as deleting a VRF range takes both, per the spec). */
  deleteReservation(r: IpReservation): void {
    const gateway = this.gatewayOfReservation(r.id);
    if (gateway !== undefined) this.drop('metal-gateway', this.gateways, gateway);
    this.drop('ip-reservation', this.reservations, r);
  }

  addGateway(gateway: MetalGateway): void {
    this.put('metal-gateway', this.gateways, gateway);
  }

  /** A private block the gateway made for itself goes with it; a reservation the user made stays. */
  deleteGateway(gateway: MetalGateway): void {
    this.drop('metal-gateway', this.gateways, gateway);
    const r = this.reservations.get(gateway.ipReservationId);
    if (r?.gatewayOwned === true) this.drop('ip-reservation', this.reservations, r);
  }

  private put<T extends { readonly id: string }>(kind: ObjectKind, map: Map<string, T>, obj: T): void {
    map.set(obj.id, obj);
    this.emit({ kind, action: 'created', id: obj.id });
  }

  private drop<T extends { readonly id: string }>(kind: ObjectKind, map: Map<string, T>, obj: T): void {
    map.delete(obj.id);
    this.emit({ kind, action: 'deleted', id: obj.id });
  }

  // ------------------------------------------------------------------ addresses

  /** Carves a device's management addresses: /31 (v4) and /127 (v6) unless the request says otherwise. */
  allocateAddresses(requests: readonly AddressRequest[]): IpAssignment[] {
    return requests.map((r) => {
      const poolKey = r.family === 6 ? 'publicV6' : r.public ? 'publicV4' : 'privateV4';
      const block = this.pools.allocate(poolKey, r.prefix);
      const range = this.pools.range(poolKey);
      return {
        id: this.ids.uuid(),
        family: r.family,
        public: r.public,
        management: true,
        network: block.network,
        prefix: block.prefix,
        parent: { network: range.network, prefix: range.prefix },
        createdAt: this.nowIso(),
      };
    });
  }

  /** A block from one of the simulator's pools; a used-up pool is the caller's 422 (the API runs out too). */
  allocateBlock(pool: PoolName, prefix: number): Cidr {
    return this.pools.allocate(pool, prefix);
  }
}

/** Delays come from code or flags; a misspelled one would silently keep its default. */
function checkDelays(delays: Record<string, unknown>): SimDelays {
  const unknown = unknownKeysProblem(delays, Object.keys(DEFAULT_DELAYS), 'delays');
  if (unknown !== undefined) throw new TypeError(unknown);
  for (const [key, v] of Object.entries(delays)) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
      throw new TypeError(`delays.${key} must be a non-negative number of milliseconds`);
  }
  return delays as unknown as SimDelays;
}

/** Copies the patch's defined fields onto the target (a PUT body leaves out what it does not change). */
function assignDefined<T extends object>(target: T, patch: Patch<T>): void {
  for (const key of Object.keys(patch) as (keyof T)[]) {
    const value = patch[key];
    if (value !== undefined) target[key] = value;
  }
}
