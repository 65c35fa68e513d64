import { afterAll, beforeAll } from '@jest/globals';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ensureGuestImage,
  Guest,
  GUEST_METADATA_URL,
  ignitionInitrd,
  seedIgnitionRoot,
  MetadataForwarder,
  TorSwitch,
  type CommandResult,
  type GuestImage,
  type GuestOs,
  type IgnitionInitrd,
} from '@metal-l2/dataplane';
import { applyIgnitionFiles } from '../../../packages/machine-config/test/support/ignition.js';
import { useNetworkWorld, type NetworkWorld } from './network-world.js';

/** TCG guests on a shared 2-core machine: boot deadlines are generous on purpose. */
export const BOOT_MS = 15 * 60_000;

/**
 * A data-plane suite's world and rack: the network world with the guests' metadata URL and a
 * quick batch poll, and the rack its guests boot in (the guest image built within 20 minutes).
 * The backoff after a Metal error is capped at 3 s instead of the production 5 minutes: the
 * guests boot for minutes while their VLAN batches are refused, and the backoff by then would be at
 * its cap, which these files would only sit out (the cap itself: port-driver.test.ts).
 */
export function useDataplaneWorld(prefix: string): { world: NetworkWorld; rack: Rack } {
  const world = useNetworkWorld(prefix, {
    metadataUrl: GUEST_METADATA_URL,
    timings: { batchPollMs: 200, metalRetryMaxMs: 3_000 },
  });
  return { world, rack: useRack(world, { imageTimeoutMs: 20 * 60_000 }) };
}

// The data plane of one test file: the cached guest image, one top-of-rack switch following the
// world's simulator, and a QEMU guest per server, each with its metadata forwarder. Everything is
// torn down in afterAll, whatever the tests did (METAL_L2_KEEP_GUEST_LOGS=1 keeps the guests'
// console logs).

/** Guest NIC names the provisioner pins to Metal's eth0/eth1 MACs (different on purpose). */
export const OS_NIC_OF_PORT: Readonly<Record<string, string>> = { eth0: 'ens4', eth1: 'ens5' };

export interface RackServer {
  readonly machine: string;
  readonly deviceId: string;
  readonly guest: Guest;
  readonly forwarder: MetadataForwarder;
  /** A Flatcar-style guest's: what Ignition's files stage wrote for the device's user data. */
  readonly ignition?: IgnitionInitrd;
  /** Guest uptime when cloud-init's final stage finished, and host wall time from QEMU start to then. */
  boot?: { uptimeSec: number; wallMs: number };
}

export interface PingOptions {
  count?: number;
  from?: string;
  /** ICMP data bytes (`-s`; ping's default is 56). */
  size?: number;
  /** Set don't-fragment (`-M do`): a packet larger than the path's MTU fails instead of being split. */
  dontFragment?: boolean;
}

export interface Rack {
  image(): GuestImage;
  switch(): TorSwitch;
  /**
   * Plugs the device's NICs into the switch and boots its guest (returns once QEMU runs). A
   * Flatcar-style guest (`os: 'flatcar'`) boots what Ignition's files stage wrote for the device's
   * user data (an Ignition config) instead of running it through cloud-init.
   */
  boot(machine: string, deviceId: string, options?: { os?: GuestOs }): Promise<RackServer>;
  server(machine: string): RackServer;
  run(machine: string, argv: readonly string[], timeoutMs?: number): Promise<CommandResult>;
  /** `ping` from the machine's guest: true when at least one reply came back. */
  ping(machine: string, address: string, options?: PingOptions): Promise<boolean>;
}

export function useRack(world: NetworkWorld, options: { imageTimeoutMs: number }): Rack {
  let image: GuestImage | undefined;
  let tor: TorSwitch | undefined;
  let dir = '';
  const servers = new Map<string, RackServer>();

  beforeAll(async () => {
    const started = Date.now();
    image = await ensureGuestImage({ buildTimeoutMs: options.imageTimeoutMs });
    console.log(
      `data plane: guest image ${image.hash} ${image.built ? `built in ${Math.round(image.buildMs / 1000)} s` : 'from the cache'} (${Date.now() - started} ms)`,
    );
    // Short: unix socket paths are limited to 107 bytes.
    dir = await mkdtemp(join(tmpdir(), 'ml2-'));
    tor = TorSwitch.start({ socketDir: dir, feed: world.sim.store });
  }, options.imageTimeoutMs + 60_000);

  afterAll(async () => {
    const keepLogs = process.env['METAL_L2_KEEP_GUEST_LOGS'] !== undefined;
    for (const s of servers.values()) {
      await s.guest.stop({ keepLogs }).catch(() => undefined);
      await s.forwarder.stop().catch(() => undefined);
    }
    await tor?.close();
    if (dir !== '' && !keepLogs) await rm(dir, { recursive: true, force: true });
    if (keepLogs) console.log(`data plane: guest logs kept in ${dir}`);
  }, 120_000);

  /** Ignition's own files stage on the device's user data exactly as the simulator holds it. */
  async function applyIgnition(deviceId: string, workDir: string): Promise<IgnitionInitrd> {
    const userData = world.sim.store.devices.get(deviceId)?.userdata;
    if (userData === undefined) throw new Error(`device ${deviceId} has no user data`);
    const root = join(workDir, 'ignition-root');
    await mkdir(root);
    await seedIgnitionRoot({ rootfs: rack.image().rootfs, root });
    await applyIgnitionFiles(userData, root);
    return ignitionInitrd({ root, baseInitrd: rack.image().initrd, workDir });
  }

  const rack: Rack = {
    image() {
      if (image === undefined) throw new Error('the rack is not set up');
      return image;
    },
    switch() {
      if (tor === undefined) throw new Error('the rack is not set up');
      return tor;
    },
    async boot(machine, deviceId, bootOptions = {}) {
      const device = await world.metal.devices.get(deviceId);
      const nics = [];
      for (const port of device.network_ports ?? []) {
        const osName = OS_NIC_OF_PORT[port.name ?? ''];
        const mac = port.data?.mac;
        if (osName === undefined || mac === undefined || port.id === undefined) continue;
        nics.push({ osName, mac, socketPath: await rack.switch().addPort(port.id) });
      }
      nics.sort((a, b) => a.osName.localeCompare(b.osName));
      const workDir = await mkdtemp(join(dir, `${machine.slice(0, 8)}-`));
      const forwarder = new MetadataForwarder({
        socketPath: join(workDir, 'md.sock'),
        simulatorUrl: world.sim.url,
        deviceId,
        hostname: device.hostname ?? machine,
      });
      await forwarder.start();
      const ignition = bootOptions.os === 'flatcar' ? await applyIgnition(deviceId, workDir) : undefined;
      const guest = await Guest.start({
        name: machine,
        image: rack.image(),
        workDir,
        nics,
        metadataSocket: join(workDir, 'md.sock'),
        ...(bootOptions.os === undefined ? {} : { os: bootOptions.os }),
        ...(ignition === undefined ? {} : { initrd: ignition.initrd }),
      });
      const server: RackServer = { machine, deviceId, guest, forwarder, ...(ignition === undefined ? {} : { ignition }) };
      servers.set(machine, server);
      return server;
    },
    server(machine) {
      const s = servers.get(machine);
      if (s === undefined) throw new Error(`no guest for ${machine}`);
      return s;
    },
    run(machine, argv, timeoutMs = 30_000) {
      return rack.server(machine).guest.run(argv, { timeoutMs });
    },
    async ping(machine, address, pingOptions = {}) {
      const argv = [
        'ping',
        '-n',
        '-q',
        '-c',
        String(pingOptions.count ?? 2),
        '-i',
        '0.3',
        '-W',
        '1',
        ...(pingOptions.from === undefined ? [] : ['-I', pingOptions.from]),
        ...(pingOptions.size === undefined ? [] : ['-s', String(pingOptions.size)]),
        ...(pingOptions.dontFragment === true ? ['-M', 'do'] : []),
        address,
      ];
      const r = await rack.run(machine, argv, 20_000);
      return r.code === 0;
    },
  };
  return rack;
}
