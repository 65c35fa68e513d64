import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { frameVid, tagFrame } from '../src/switch/frame.js';
import type { MetalPortState } from '../src/switch/port-state.js';
import { TorSwitch, type PortStateFeed } from '../src/switch/tor-switch.js';

// The switch on its sockets, with QEMU's stream framing, following a feed shaped like the
// simulator store: what a change of port state does to frames in flight.

class FakeFeed implements PortStateFeed {
  readonly ports = new Map<string, MetalPortState>();
  readonly vlans = new Map([['v1000', { vxlan: 1000 }]]);
  private readonly listeners = new Set<(change: { kind: string }) => void>();
  subscribe(listener: (change: { kind: string }) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  set(port: MetalPortState): void {
    this.ports.set(port.id, port);
    for (const l of this.listeners) l({ kind: 'port' });
  }
}

function nic(id: string, p: Partial<MetalPortState> = {}): MetalPortState {
  return {
    id,
    deviceId: `dev-${id}`,
    name: 'eth0',
    kind: 'physical',
    bondName: 'bond0',
    mac: '02:00:00:00:00:01',
    bonded: false,
    layer2: true,
    vlans: [],
    nativeVlanId: undefined,
    ...p,
  };
}

/** A QEMU stand-in: sends and receives length-prefixed frames. */
class Wire {
  readonly received: Buffer[] = [];
  private pending = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 4 && this.pending.length >= 4 + this.pending.readUInt32BE(0)) {
        const len = this.pending.readUInt32BE(0);
        this.received.push(Buffer.from(this.pending.subarray(4, 4 + len)));
        this.pending = this.pending.subarray(4 + len);
      }
      for (const w of this.waiters.splice(0)) w();
    });
  }
  static async open(path: string): Promise<Wire> {
    const socket = connect(path);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new Wire(socket);
  }
  send(frame: Buffer): void {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(frame.length, 0);
    // Split header and frame across writes: the switch must reassemble.
    this.socket.write(header);
    this.socket.write(frame);
  }
  async next(timeoutMs = 2_000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length === 0) {
      if (Date.now() > deadline) throw new Error('no frame arrived');
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
    return this.received.shift() as Buffer;
  }
  close(): void {
    this.socket.destroy();
  }
}

const broadcast = (payload: string): Buffer =>
  Buffer.concat([Buffer.from('ffffffffffff020000000001', 'hex'), Buffer.from('0800', 'hex'), Buffer.from(payload)]);

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

describe('TorSwitch', () => {
  test('forwards between sockets as the port state says, and follows changes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ml2-sw-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const feed = new FakeFeed();
    feed.set(nic('a', { vlans: [{ vlanId: 'v1000' }] }));
    feed.set(nic('b', { vlans: [{ vlanId: 'v1000' }], nativeVlanId: 'v1000' }));
    feed.set(nic('c', { vlans: [{ vlanId: 'v1000' }] }));
    const sw = TorSwitch.start({ socketDir: dir, feed });
    cleanup.push(() => sw.close());
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map(async (id) => Wire.open(await sw.addPort(id))));
    cleanup.push(() => Promise.resolve([a, b, c].forEach((w) => w?.close())));
    if (a === undefined || b === undefined || c === undefined) throw new Error('wires');

    // tagged 1000 from a: untagged on b (native), tagged on c
    a.send(tagFrame(broadcast('one'), 1000));
    expect(frameVid(await b.next())).toBeUndefined();
    expect(frameVid(await c.next())).toBe(1000);

    // b loses VLAN 1000: a's next frame reaches c only
    feed.set(nic('b'));
    a.send(tagFrame(broadcast('two'), 1000));
    expect((await c.next()).subarray(-3).toString()).toBe('two');
    c.send(tagFrame(broadcast('barrier'), 1000)); // reaches a; b would have had 'two' by now
    expect((await a.next()).subarray(-7).toString()).toBe('barrier');
    expect(b.received).toEqual([]);
    expect(sw.counters('a')).toMatchObject({ rxFrames: 2, txFrames: 1 });
  });
});
