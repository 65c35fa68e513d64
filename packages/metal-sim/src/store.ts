// The simulator's state: every object, the seed, ids, time and address pools, and the device
// lifecycle. Request handlers (routes/*) and port actions (port-actions.ts) change it; rules decide
// whether they may. The store itself refuses nothing the docs state: it holds and indexes.

import type { CancelTask, SimClock } from './clock.js';
import type { IdGenerator } from './ids.js';
import { BlockPool, parseCidr, type AddressFamily, type Cidr } from './ip-math.js';
import type {
  Device,
  DeviceEvent,
  DeviceState,
  IpAssignment,
  IpReservation,
  MetalGateway,
  Metro,
  Plan,
  Port,
  Project,
  TokenGrant,
  VirtualNetwork,
  VlanAssignmentBatch,
  Vrf,
} from './models.js';
import { bondNetworkType, type NetworkType } from './network-type.js';
import type { SeedConfig } from './seed.js';

/** How long the state machines take. All in simulated time (the store's clock). */
export interface SimDelays {
  /** queued -> provisioning. */
  readonly deviceQueuedMs: number;
  /** provisioning -> active. */
  readonly deviceProvisioningMs: number;
  /** A VLAN assignment batch: queued -> in_progress. */
  readonly batchQueuedMs: number;
  /** A VLAN assignment batch: in_progress -> completed (or failed). */
  readonly batchInProgressMs: number;
}

export const DEFAULT_DELAYS: SimDelays = {
  deviceQueuedMs: 1_000,
  deviceProvisioningMs: 4_000,
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

export interface StoreOptions {
  readonly seed: SeedConfig;
  readonly ids: IdGenerator;
  readonly clock: SimClock;
  readonly delays?: Partial<SimDelays>;
}

/** The address pools devices and reservations are carved from (documentation-style, never routed). */
const POOLS = {
  publicV4: '147.75.0.0/16',
  privateV4: '10.64.0.0/10',
  publicV6: '2604:1380:4600::/40',
  globalV4: '147.28.0.0/16',
  /**
   * Public IPv4 reservations (elastic IPs, public blocks) come from their own range, as on the
   * real API, whose reservations never looked like a device's /31s or began at a provider
   * block's network address (the first reservation here is 145.40.64.37/32, not x.x.0.0/32).
   */
  elasticV4: '145.40.64.0/18',
} as const;

/** Where each pool starts handing out blocks (aligned up to the block size). */
const POOL_OFFSETS: Partial<Record<keyof typeof POOLS, bigint>> = { elasticV4: 37n };

export interface DeviceCreate {
  readonly projectId: string;
  readonly plan: Plan;
  readonly metro: Metro;
  readonly operatingSystem: string;
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
  readonly projects = new Map<string, Project>();
  readonly tokens = new Map<string, TokenGrant>();
  readonly devices = new Map<string, Device>();
  readonly ports = new Map<string, Port>();
  readonly vlans = new Map<string, VirtualNetwork>();
  readonly vrfs = new Map<string, Vrf>();
  readonly reservations = new Map<string, IpReservation>();
  readonly gateways = new Map<string, MetalGateway>();
  readonly batches = new Map<string, VlanAssignmentBatch>();
  readonly delays: SimDelays;
  readonly clock: SimClock;
  readonly ids: IdGenerator;
  readonly vrfsPerProject: number;

  private readonly listeners = new Set<StoreListener>();
  private readonly osIds = new Map<string, string>();
  private readonly timers = new Set<CancelTask>();
  private readonly pools: Record<keyof typeof POOLS, BlockPool>;

  constructor(options: StoreOptions) {
    this.clock = options.clock;
    this.ids = options.ids;
    this.delays = { ...DEFAULT_DELAYS, ...options.delays };
    this.vrfsPerProject = options.seed.limits?.vrfsPerProject ?? 8;
    this.pools = {
      publicV4: new BlockPool(mustCidr(POOLS.publicV4)),
      privateV4: new BlockPool(mustCidr(POOLS.privateV4)),
      publicV6: new BlockPool(mustCidr(POOLS.publicV6)),
      globalV4: new BlockPool(mustCidr(POOLS.globalV4)),
      elasticV4: new BlockPool(mustCidr(POOLS.elasticV4), POOL_OFFSETS.elasticV4),
    };
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

  emit(change: StoreChange): void {
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
    return bondNetworkType({
      layer2: bond.layer2,
      membersBonded: this.bondMembers(bond).map((m) => m.bonded),
      bondVlanCount: bond.vlans.length,
    });
  }

  /** The device's type is its first bond's (bond0 carries the management addresses). */
  deviceNetworkType(device: Device): NetworkType {
    const bond0 = this.devicePorts(device).find((p) => p.kind === 'bond');
    if (bond0 === undefined) throw new Error(`internal: device ${device.id} has no bond`);
    return this.networkTypeOf(bond0);
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
    this.operatingSystemId(input.operatingSystem);
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
      operatingSystem: input.operatingSystem,
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
      events: [],
      switchUuid: this.ids.uuid(),
    };
    device.ipAssignments = this.allocateAddresses(input.addresses);
    this.devices.set(id, device);
    this.addEvent(device, { type: 'instance.created', state: 'succeeded', body: 'Device created and queued for provisioning' });
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
    const bondNames = [...new Set(Object.values(layout))];
    const ids: string[] = [];
    for (const name of bondNames) {
      const bond: Port = {
        id: this.ids.uuid(),
        deviceId,
        name,
        kind: 'bond',
        bondName: name,
        mac: undefined,
        bonded: true,
        layer2: false,
        vlans: [],
        nativeVlanId: undefined,
      };
      this.ports.set(bond.id, bond);
      ids.push(bond.id);
    }
    for (const [name, bondName] of Object.entries(layout)) {
      const port: Port = {
        id: this.ids.uuid(),
        deviceId,
        name,
        kind: 'physical',
        bondName,
        mac: this.ids.mac(),
        bonded: true,
        layer2: false,
        vlans: [],
        nativeVlanId: undefined,
      };
      this.ports.set(port.id, port);
      ids.push(port.id);
    }
    return ids;
  }

  setDeviceState(device: Device, state: DeviceState): void {
    device.state = state;
    device.updatedAt = this.nowIso();
    const body = state === 'provisioning' ? 'Provisioning started' : state === 'active' ? 'Provisioning completed' : `Device is ${state}`;
    this.addEvent(device, { type: `provisioning.${state}`, state: 'succeeded', body });
    this.emit({ kind: 'device', action: 'state', deviceId: device.id });
  }

  addEvent(
    device: Device,
    e: { readonly type: string; readonly state: string; readonly body: string; readonly interpolated?: string },
  ): DeviceEvent {
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

  deleteDevice(device: Device): void {
    for (const port of this.devicePorts(device)) {
      for (const batch of this.openBatches({ portId: port.id })) {
        batch.state = 'failed';
        batch.errorMessages = ['the device was deleted'];
        batch.updatedAt = this.nowIso();
      }
      this.ports.delete(port.id);
    }
    this.devices.delete(device.id);
    device.state = 'deleted';
    this.emit({ kind: 'device', action: 'deleted', deviceId: device.id });
  }

  // ------------------------------------------------------------------ addresses

  /** Carves a device's management addresses: /31 (v4) and /127 (v6) unless the request says otherwise. */
  allocateAddresses(requests: readonly AddressRequest[]): IpAssignment[] {
    return requests.map((r) => {
      const poolKey = r.family === 6 ? 'publicV6' : r.public ? 'publicV4' : 'privateV4';
      const block = this.allocateBlock(poolKey, r.prefix);
      return {
        id: this.ids.uuid(),
        family: r.family,
        public: r.public,
        management: true,
        network: block.network,
        prefix: block.prefix,
        parent: { network: mustCidr(POOLS[poolKey]).network, prefix: mustCidr(POOLS[poolKey]).prefix },
        createdAt: this.nowIso(),
      };
    });
  }

  /** A block from one of the simulator's pools; throws when the pool is used up (a 422 upstream). */
  allocateBlock(pool: keyof typeof POOLS, prefix: number): Cidr {
    const block = this.pools[pool].allocate(prefix);
    if (block === undefined) throw new PoolExhaustedError(`the simulator's ${pool} pool (${POOLS[pool]}) has no /${prefix} left`);
    return block;
  }
}

export class PoolExhaustedError extends Error {
  override readonly name = 'PoolExhaustedError';
}

function mustCidr(text: string): Cidr {
  const c = parseCidr(text);
  if (c === undefined) throw new Error(`internal: bad pool ${text}`);
  return c;
}
