// The simulated top-of-rack switch: one unix-socket port per server NIC, spoken to by QEMU's
// `-netdev stream` (each frame preceded by its length, 4 bytes big-endian). Its forwarding follows
// the Metal simulator's live port state: every change the store reports recomputes the ports'
// configuration (port-state.ts) that forwardFrame (forwarding.ts) applies.
import { rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { egressFrame, frameVid } from './frame.js';
import { forwardFrame, type SwitchPortConfig } from './forwarding.js';
import { switchPortConfig, type MetalNetworkState, type PortConfig } from './port-state.js';

/** What the switch follows: the simulator store (`sim.store`) fits. */
export interface PortStateFeed extends MetalNetworkState {
  subscribe(listener: (change: { readonly kind: string }) => void): () => void;
}

export interface TorSwitchOptions {
  /** Where the port sockets go; short (unix socket paths are limited to 107 bytes). */
  readonly socketDir: string;
  readonly feed: PortStateFeed;
}

export interface PortCounters {
  rxFrames: number;
  txFrames: number;
  dropped: number;
}

interface SwitchPort {
  readonly portId: string;
  readonly socketPath: string;
  readonly server: Server;
  socket: Socket | undefined;
  config: PortConfig | undefined;
  readonly counters: PortCounters;
}

const HEADER_BYTES = 4;

export class TorSwitch {
  private readonly ports = new Map<string, SwitchPort>();
  private unsubscribe: () => void = () => undefined;
  private configs: SwitchPortConfig[] = [];
  private nextSocket = 0;

  private constructor(private readonly options: TorSwitchOptions) {}

  /** A switch with no ports yet, following the feed until close(); ports are added with addPort. */
  static start(options: TorSwitchOptions): TorSwitch {
    const sw = new TorSwitch(options);
    sw.unsubscribe = options.feed.subscribe((change) => {
      if (change.kind === 'port' || change.kind === 'device' || change.kind === 'virtual-network' || change.kind === 'batch') sw.refresh();
    });
    return sw;
  }

  /** Opens the switch port for a Metal port (a server NIC); resolves to the socket QEMU connects to. */
  async addPort(portId: string): Promise<string> {
    const existing = this.ports.get(portId);
    if (existing !== undefined) return existing.socketPath;
    const socketPath = join(this.options.socketDir, `${this.nextSocket++}.sock`);
    await rm(socketPath, { force: true });
    const port: SwitchPort = {
      portId,
      socketPath,
      server: createServer(),
      socket: undefined,
      config: undefined,
      counters: { rxFrames: 0, txFrames: 0, dropped: 0 },
    };
    port.server.on('connection', (socket) => this.attach(port, socket));
    await new Promise<void>((resolve, reject) => {
      port.server.once('error', reject);
      port.server.listen(socketPath, () => {
        port.server.off('error', reject);
        resolve();
      });
    });
    this.ports.set(portId, port);
    this.refresh();
    return socketPath;
  }

  /** The configuration every port forwards by now (for tests and diagnostics). */
  portConfigs(): readonly SwitchPortConfig[] {
    return this.configs;
  }

  counters(portId: string): PortCounters | undefined {
    const c = this.ports.get(portId)?.counters;
    return c === undefined ? undefined : { ...c };
  }

  async close(): Promise<void> {
    this.unsubscribe();
    for (const port of this.ports.values()) {
      port.socket?.destroy();
      await new Promise<void>((resolve) => port.server.close(() => resolve()));
      await rm(port.socketPath, { force: true });
    }
    this.ports.clear();
  }

  private refresh(): void {
    const configs: SwitchPortConfig[] = [];
    for (const port of this.ports.values()) {
      port.config = switchPortConfig(this.options.feed, port.portId);
      if (port.config !== undefined) configs.push({ ...port.config, up: port.socket !== undefined });
    }
    this.configs = configs;
  }

  private attach(port: SwitchPort, socket: Socket): void {
    port.socket?.destroy();
    port.socket = socket;
    this.refresh();
    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= HEADER_BYTES) {
        const length = pending.readUInt32BE(0);
        if (pending.length < HEADER_BYTES + length) break;
        const frame = Buffer.from(pending.subarray(HEADER_BYTES, HEADER_BYTES + length));
        pending = pending.subarray(HEADER_BYTES + length);
        this.forward(port, frame);
      }
    });
    const detach = (): void => {
      if (port.socket === socket) {
        port.socket = undefined;
        this.refresh();
      }
    };
    socket.on('close', detach);
    socket.on('error', detach);
  }

  private forward(from: SwitchPort, frame: Buffer): void {
    from.counters.rxFrames++;
    const out = forwardFrame(this.configs, { portId: from.portId, vid: frameVid(frame) });
    if (out.length === 0) from.counters.dropped++;
    for (const egress of out) {
      const to = this.ports.get(egress.portId);
      if (to?.socket === undefined) continue;
      const data = egressFrame(frame, egress.vid);
      const header = Buffer.alloc(HEADER_BYTES);
      header.writeUInt32BE(data.length, 0);
      to.socket.write(Buffer.concat([header, data]));
      to.counters.txFrames++;
    }
  }
}
