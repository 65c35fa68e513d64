// One QEMU (TCG) guest of the data-plane suite: Debian's kernel and the cached image (a throwaway
// snapshot of it: nothing is written back), a management NIC on QEMU's user network whose only
// reachable address is the metadata host (guestfwd to this guest's MetadataForwarder), one NIC per
// Metal port plugged into the switch, and the command agent on a virtio-serial port.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { open, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { GuestAgent, type CommandResult } from './guest-agent.js';
import type { GuestImage } from './guest-image.js';
import { GUEST_METADATA_HOST, GUEST_SEED_URL } from './metadata-forwarder.js';

export interface GuestNic {
  /** The name the provisioner pins to this MAC in the guest (e.g. ens4). */
  readonly osName: string;
  readonly mac: string;
  /** The switch port's socket (TorSwitch.addPort). */
  readonly socketPath: string;
}

export interface GuestOptions {
  readonly name: string;
  readonly image: GuestImage;
  /** A short, private directory for this guest's sockets and logs (removed by stop()). */
  readonly workDir: string;
  readonly nics: readonly GuestNic[];
  /** The metadata forwarder's unix socket. */
  readonly metadataSocket: string;
  readonly memoryMb?: number;
  /** Hard cap on the QEMU process's life, so a crashed test run leaves nothing behind for long. */
  readonly maxLifetimeSec?: number;
  /**
   * `debian` (default): Equinix's Debian as its provisioner leaves it, ifupdown and cloud-init,
   * which runs the user data from the NoCloud seed. `flatcar`: a Flatcar-style boot of the same
   * image: no cloud-init, no ifupdown; the provisioner's bond0 and the user data's units are
   * systemd-networkd's, and the user data reaches the root as Ignition's files stage wrote it
   * (`initrd` from ignitionInitrd()).
   */
  readonly os?: GuestOs;
  /** The initrd to boot instead of the image's (a Flatcar-style guest's: the image's plus Ignition's files). */
  readonly initrd?: string;
}

export type GuestOs = 'debian' | 'flatcar';

/**
 * What makes the one image boot as a Flatcar-style guest, on the kernel command line: the
 * provisioner writes bond0 as networkd units (metal-l2-networkd.service), systemd-networkd runs, and
 * what belongs to Debian's boot (ifupdown's networking.service, cloud-init) is masked.
 */
const FLATCAR_CMDLINE = [
  'metal_l2.os=flatcar',
  'systemd.wants=systemd-networkd.service',
  'systemd.mask=networking.service',
  'systemd.mask=cloud-init.service',
  'systemd.mask=cloud-final.service',
];

/** The management NIC's name in the guest (its stanza is in the image's /etc/network/interfaces). */
export const MANAGEMENT_NIC = 'ens3';
const BOOT_FINISHED = '/var/lib/cloud/instance/boot-finished';

function managementMac(name: string): string {
  const h = createHash('sha256').update(name).digest();
  return ['52', '54', '00', ...[0, 1, 2].map((i) => (h[i] ?? 0).toString(16).padStart(2, '0'))].join(':');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class Guest {
  readonly agent: GuestAgent;
  readonly consoleLog: string;
  /** Host clock when QEMU was started. */
  readonly startedAt = Date.now();
  private exited: Promise<void>;
  private stopped = false;

  private constructor(
    readonly options: GuestOptions,
    private readonly child: ChildProcess,
  ) {
    this.agent = new GuestAgent(join(options.workDir, 'agent.sock'));
    this.consoleLog = join(options.workDir, 'console.log');
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** The QEMU command line (exported for the README and for running a guest by hand). */
  static qemuArgs(options: GuestOptions): string[] {
    const { image, workDir, nics } = options;
    const pins = [`metal_l2.nic=${MANAGEMENT_NIC},${managementMac(options.name)}`, ...nics.map((n) => `metal_l2.nic=${n.osName},${n.mac}`)];
    // mitigations=off: page-table isolation makes every syscall a TLB flush, which TCG pays dearly for.
    const append = [
      'root=/dev/vda',
      'rw',
      'console=ttyS0',
      'quiet',
      'fsck.mode=skip',
      'mitigations=off',
      ...(options.os === 'flatcar' ? FLATCAR_CMDLINE : [`ds=nocloud-net;s=${GUEST_SEED_URL}`]),
      ...pins,
    ].join(' ');
    const args = [
      // TCG only (KVM hangs guests on this machine); a 256 MiB code cache instead of the 1 GiB default.
      ...['-machine', 'q35', '-accel', 'tcg,tb-size=256', '-cpu', 'qemu64', '-smp', '1', '-m', String(options.memoryMb ?? 384)],
      ...['-nodefaults', '-no-user-config', '-display', 'none', '-no-reboot'],
      ...['-kernel', image.kernel, '-initrd', options.initrd ?? image.initrd, '-append', append],
      ...['-drive', `file=${image.rootfs},format=raw,if=virtio,snapshot=on`],
      ...['-serial', `file:${join(workDir, 'console.log')}`],
      ...['-netdev', `user,id=mgmt,restrict=on,guestfwd=tcp:${GUEST_METADATA_HOST}:80-cmd:socat - UNIX-CONNECT:${options.metadataSocket}`],
      ...['-device', `virtio-net-pci,netdev=mgmt,addr=0x3,mac=${managementMac(options.name)}`],
    ];
    nics.forEach((nic, i) => {
      args.push('-netdev', `stream,id=n${i},server=off,addr.type=unix,addr.path=${nic.socketPath}`);
      args.push('-device', `virtio-net-pci,netdev=n${i},addr=0x${(4 + i).toString(16)},mac=${nic.mac}`);
    });
    args.push('-chardev', `socket,id=agent,path=${join(workDir, 'agent.sock')},server=on,wait=off`);
    args.push('-device', 'virtio-serial-pci,addr=0x10', '-device', 'virtserialport,chardev=agent,name=metal-l2.agent');
    return args;
  }

  /** Starts QEMU and connects to the agent's socket (the guest itself boots in the background). */
  static async start(options: GuestOptions): Promise<Guest> {
    const log = await open(join(options.workDir, 'qemu.log'), 'w');
    const child = spawn(
      'timeout',
      ['--kill-after=10', String(options.maxLifetimeSec ?? 1800), 'qemu-system-x86_64', ...Guest.qemuArgs(options)],
      { stdio: ['ignore', log.fd, log.fd] },
    );
    await log.close();
    const guest = new Guest(options, child);
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await guest.agent.connect();
        return guest;
      } catch (err: unknown) {
        if (child.exitCode !== null || Date.now() > deadline) {
          await guest.stop();
          throw new Error(`guest ${options.name}: QEMU did not open its agent socket (see ${join(options.workDir, 'qemu.log')})`, {
            cause: err,
          });
        }
        await sleep(200);
      }
    }
  }

  run(argv: readonly string[], options: { timeoutMs: number }): Promise<CommandResult> {
    return this.agent.run(argv, options);
  }

  /** Waits until the agent answers; resolves to the guest's uptime then. */
  async waitForAgent(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.assertRunning();
      try {
        return (await this.agent.run(['true'], { timeoutMs: 5_000 })).uptimeSec;
      } catch (err: unknown) {
        if (Date.now() > deadline)
          throw new Error(`guest ${this.options.name}: the agent did not answer within ${timeoutMs} ms; console: ${this.consoleLog}`, {
            cause: err,
          });
      }
    }
  }

  /**
   * Waits until cloud-init's final stage has run (the user data's runcmd included); resolves to the
   * guest uptime cloud-init recorded at that moment.
   */
  async waitForCloudInit(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    await this.waitForAgent(timeoutMs);
    for (;;) {
      this.assertRunning();
      const r = await this.agent.run(['cat', BOOT_FINISHED], { timeoutMs: 10_000 }).catch(() => undefined);
      // cloud-init writes "<uptime> - <date> - v. <version>"; an empty read is the file being written.
      const uptime = r?.code === 0 ? Number.parseFloat(r.stdout) : NaN;
      if (Number.isFinite(uptime)) return uptime;
      if (Date.now() > deadline)
        throw new Error(`guest ${this.options.name}: cloud-init did not finish within ${timeoutMs} ms; console: ${this.consoleLog}`);
      await sleep(1_000);
    }
  }

  /**
   * Waits until a oneshot unit has run to completion (a Flatcar-style guest's user-data unit: its
   * cloud-init); resolves to the guest uptime when it exited. Fails at once when the unit failed.
   */
  async waitForUnit(unit: string, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    await this.waitForAgent(timeoutMs);
    for (;;) {
      this.assertRunning();
      const r = await this.agent
        .run(['systemctl', 'show', '-p', 'ActiveState', '-p', 'ExecMainExitTimestampMonotonic', unit], { timeoutMs: 10_000 })
        .catch(() => undefined);
      const props = new Map((r?.stdout ?? '').split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const));
      if (props.get('ActiveState') === 'failed') {
        const status = await this.agent
          .run(['systemctl', 'status', '--no-pager', '-l', unit], { timeoutMs: 10_000 })
          .catch(() => undefined);
        throw new Error(`guest ${this.options.name}: ${unit} failed\n${status?.stdout ?? ''}`);
      }
      if (props.get('ActiveState') === 'active') return Number(props.get('ExecMainExitTimestampMonotonic')) / 1e6;
      if (Date.now() > deadline)
        throw new Error(`guest ${this.options.name}: ${unit} did not finish within ${timeoutMs} ms; console: ${this.consoleLog}`);
      await sleep(1_000);
    }
  }

  private assertRunning(): void {
    if (this.stopped) throw new Error(`guest ${this.options.name} was stopped`);
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      throw new Error(
        `guest ${this.options.name}: QEMU exited (${this.child.exitCode ?? this.child.signalCode}); see ${this.options.workDir}`,
      );
    }
  }

  /**
   * Cuts the guest's power: SIGKILL to QEMU itself, so nothing of the guest runs on (no shutdown, no
   * last packet). QEMU runs under `timeout`, which cannot pass SIGKILL on, hence its child, not it.
   * Resolves to the host time of the kill once QEMU is gone; the sockets and logs stay until stop().
   */
  async kill(): Promise<number> {
    const pid = this.child.pid;
    if (pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) {
      throw new Error(`guest ${this.options.name}: QEMU is not running`);
    }
    const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8'))
      .trim()
      .split(/\s+/)
      .filter((c) => c !== '');
    const qemu = Number(children[0]);
    if (children.length !== 1 || !Number.isInteger(qemu)) {
      throw new Error(`guest ${this.options.name}: expected QEMU as the one child of timeout (pid ${pid}), found [${children.join(', ')}]`);
    }
    process.kill(qemu, 'SIGKILL');
    const killedAt = Date.now();
    await this.exited;
    this.agent.close();
    return killedAt;
  }

  /** Stops QEMU (SIGTERM, then SIGKILL) and removes the guest's sockets and logs unless keepLogs. */
  async stop(options: { keepLogs?: boolean } = {}): Promise<void> {
    this.stopped = true;
    this.agent.close();
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const killed = await Promise.race([this.exited.then(() => true), sleep(10_000).then(() => false)]);
      if (!killed) {
        this.child.kill('SIGKILL');
        await this.exited;
      }
    }
    if (options.keepLogs !== true) await rm(this.options.workDir, { recursive: true, force: true });
  }
}
