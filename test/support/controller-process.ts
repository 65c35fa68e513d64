import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './paths.js';
import { timeouts } from './timeouts.js';
import { waitFor } from './wait-for.js';

// A controller as operators run it: the built binary (npm test builds first) in a child process
// of its own, so a test can SIGKILL it, run two that share nothing, run an earlier release
// (old-release.ts), and read what it reports on /metrics and /readyz. Both controllers take the
// runtime's flags (packages/kube); the IPAM controller's main is the default.

const main = join(repoRoot, 'packages', 'ipam-controller', 'dist', 'main.js');

/** A TCP port for the controller's metrics and probe servers: the shared one, below the ephemeral range. */
export { freePort } from '@metal-l2/local-control-plane';

export interface ControllerProcessOptions {
  readonly kubeconfig: string;
  readonly namespace: string;
  /** Leader election through this Lease in `namespace`; without it, leader election is off. */
  readonly lease?: string;
  /** The replica's identity (POD_NAME), which leader election records as the holder. */
  readonly identity?: string;
  /** Serve /metrics on 127.0.0.1 at this port (otherwise not at all). */
  readonly metricsPort?: number;
  /** Serve /healthz and /readyz on 127.0.0.1 at this port (otherwise not at all). */
  readonly probePort?: number;
  /** Another main.js: the network controller, or an older release (old-release.ts); default this tree's IPAM controller. */
  readonly main?: string;
  /** Serve the webhooks at `port` with the certificate in `certDir` (otherwise not at all). */
  readonly webhook?: { readonly port: number; readonly certDir: string };
  /** More flags, after the usual ones (e.g. `--block-size 16`). */
  readonly args?: readonly string[];
  /** More environment (e.g. NODE_PATH for an older build that has no node_modules of its own). */
  readonly env?: Readonly<Record<string, string>>;
}

export class ControllerProcess {
  private readonly exited: Promise<void>;

  private constructor(
    readonly options: ControllerProcessOptions,
    readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** Starts `node packages/ipam-controller/dist/main.js` (or options.main) for one namespace; its stderr (warnings and errors) goes to the test's. */
  static start(options: ControllerProcessOptions): ControllerProcess {
    const args = [
      options.main ?? main,
      '--kubeconfig',
      options.kubeconfig,
      '--namespace',
      options.namespace,
      ...(options.lease === undefined
        ? ['--leader-elect=false']
        : ['--leader-elect', '--leader-election-namespace', options.namespace, '--leader-election-id', options.lease]),
      '--metrics-bind-address',
      options.metricsPort === undefined ? '0' : `127.0.0.1:${options.metricsPort}`,
      '--health-probe-bind-address',
      options.probePort === undefined ? '0' : `127.0.0.1:${options.probePort}`,
      ...(options.webhook === undefined
        ? ['--webhook-port', '0']
        : ['--webhook-port', String(options.webhook.port), '--webhook-cert-dir', options.webhook.certDir]),
      '--log-level',
      'warn',
      ...(options.args ?? []),
    ];
    const env = { ...process.env, ...options.env, ...(options.identity === undefined ? {} : { POD_NAME: options.identity }) };
    return new ControllerProcess(options, spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env }));
  }

  /** The same controller started again (a restarted pod). */
  restarted(): ControllerProcess {
    return ControllerProcess.start(this.options);
  }

  /** SIGKILL (no shutdown work at all, as when a node dies) and wait until the process is gone. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** For stopAfterAll: a controller left running at the end of a file is killed. */
  async stop(): Promise<void> {
    await this.kill();
  }

  /** Waits until /readyz answers 200: its caches synced, it acts on what it watches. */
  async ready(): Promise<void> {
    const port = this.options.probePort;
    if (port === undefined) throw new Error('this controller serves no /readyz (no probePort)');
    await waitFor(
      `/readyz of the controller on port ${port}`,
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.ok === true,
      {
        timeoutMs: timeouts.claimBound,
      },
    );
  }

  /** The body of /metrics. */
  async metricsText(): Promise<string> {
    if (this.options.metricsPort === undefined) throw new Error('this controller serves no /metrics (no metricsPort)');
    const res = await fetch(`http://127.0.0.1:${this.options.metricsPort}/metrics`);
    if (!res.ok) throw new Error(`/metrics answered ${res.status}`);
    return res.text();
  }

  /** The sum of a counter's or gauge's samples over all label values, from /metrics (0 when it has none). */
  async metric(name: string): Promise<number> {
    return sumSamples(await this.metricsText(), name);
  }
}

export function sumSamples(text: string, name: string): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}
