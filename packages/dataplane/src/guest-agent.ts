// The host side of the guest's command agent (guest/files/metal-l2-agent): JSON lines over the
// virtio-serial port `metal-l2.agent`, which QEMU exposes as a unix socket on the host.
import { connect, type Socket } from 'node:net';

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The guest's uptime when the command ended. */
  readonly uptimeSec: number;
}

interface Pending {
  resolve(result: CommandResult): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

function isCommandAnswer(value: unknown): value is CommandResult & { id: number } {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v['id'] === 'number' && typeof v['code'] === 'number' && typeof v['stdout'] === 'string' && typeof v['stderr'] === 'string';
}

export class GuestAgent {
  private socket: Socket | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buffer = '';

  constructor(private readonly socketPath: string) {}

  /** Connects to QEMU's chardev socket (it exists once QEMU runs). */
  async connect(): Promise<void> {
    const socket = connect(this.socketPath);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.receive(chunk));
    socket.on('close', () => this.failAll(new Error('the guest agent connection closed')));
    socket.on('error', () => undefined);
    this.socket = socket;
  }

  /** Runs argv in the guest; rejects when no answer comes within timeoutMs (e.g. the agent is not up yet). */
  run(argv: readonly string[], options: { timeoutMs: number }): Promise<CommandResult> {
    const socket = this.socket;
    if (socket === undefined) return Promise.reject(new Error('the guest agent is not connected'));
    const id = this.nextId++;
    return new Promise<CommandResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer from the guest agent within ${options.timeoutMs} ms to ${argv.join(' ')}`));
      }, options.timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      socket.write(`${JSON.stringify({ id, argv, timeoutSec: Math.max(1, Math.floor(options.timeoutMs / 1000) - 1) })}\n`);
    });
  }

  close(): void {
    this.failAll(new Error('the guest agent was closed'));
    this.socket?.destroy();
    this.socket = undefined;
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    let newline = this.buffer.indexOf('\n');
    while (newline >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      newline = this.buffer.indexOf('\n');
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue;
      }
      if (!isCommandAnswer(parsed)) continue;
      const waiting = this.pending.get(parsed.id);
      if (waiting === undefined) continue; // an answer to a request that timed out
      this.pending.delete(parsed.id);
      clearTimeout(waiting.timer);
      waiting.resolve({
        code: parsed.code,
        stdout: parsed.stdout,
        stderr: parsed.stderr,
        uptimeSec: typeof parsed.uptimeSec === 'number' ? parsed.uptimeSec : NaN,
      });
    }
  }

  private failAll(err: Error): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(err);
      this.pending.delete(id);
    }
  }
}
