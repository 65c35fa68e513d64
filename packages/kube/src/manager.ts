import { setMaxListeners } from 'node:events';
import type { InformerHandle } from './cache/informer.js';
import type { KubeClient } from './client/kube-client.js';
import type { Controller } from './controller/controller.js';
import { startProbeServer, type Check } from './health.js';
import type { ServerHandle } from './http-server.js';
import { LeaderElector, type LeaderElectorOptions } from './leader-election.js';
import { errorFields, type Logger } from './log.js';
import { collectProcessMetrics, createRuntimeMetrics, startMetricsServer, type RuntimeMetrics } from './metrics.js';

/** Anything long-lived: start blocks until the signal aborts and its work has wound down. */
export interface Runnable {
  start(signal: AbortSignal): Promise<void>;
}

export interface RunnableOptions {
  /** For logs. */
  readonly name: string;
  /** Run only while this process holds the lease (default true; caches and servers say false). */
  readonly needsLeaderElection?: boolean;
}

export type ManagerLeaderElectionOptions = Omit<LeaderElectorOptions, 'logger' | 'metrics' | 'client'> & { readonly client: KubeClient };

export interface ManagerOptions {
  readonly logger: Logger;
  /** `--metrics-bind-address` (e.g. ":8080"); "0" or absent disables /metrics. */
  readonly metricsBindAddress?: string;
  /** `--health-probe-bind-address` (e.g. ":8081"); "0" or absent disables /healthz and /readyz. */
  readonly healthProbeBindAddress?: string;
  /** Lease settings; absent means no leader election (every replica runs everything). */
  readonly leaderElection?: ManagerLeaderElectionOptions;
  /** How long to wait for runnables after the stop signal. Default 30 s. */
  readonly gracefulShutdownTimeoutMs?: number;
  /** Pass the same metrics to controllers and informers. Default: a fresh registry. */
  readonly metrics?: RuntimeMetrics;
  /** Stop on SIGTERM/SIGINT (default true; tests turn it off). */
  readonly handleSignals?: boolean;
  /** Add Node.js process metrics to the registry at start (default true). */
  readonly processMetrics?: boolean;
  /**
   * Called the moment the lease is lost, after leader work's signal aborted and before anything
   * else runs. A binary passes one that logs and exits the process, as client-go's users do: work
   * still unwinding must not reach the API or Metal while another replica already leads. Absent
   * (in-process use), start() rejects with LeadershipLostError without waiting for leader work.
   */
  readonly onLeadershipLost?: () => void;
}

/** The manager stopped because this process lost its lease; the process should exit non-zero. */
export class LeadershipLostError extends Error {
  readonly code = 'LeadershipLostError';
  override readonly name = 'LeadershipLostError';
}

interface Entry {
  readonly runnable: Runnable;
  readonly name: string;
  readonly needsLeaderElection: boolean;
}

/**
 * Owns a process's long-lived parts: informers and servers run on every replica; controllers run
 * only on the leader (when leader election is on). Handles SIGTERM/SIGINT by aborting everything
 * and waiting for it to finish (bounded), releases the lease, and serves /healthz, /readyz
 * (ready once every informer synced) and /metrics.
 */
export class Manager {
  readonly metrics: RuntimeMetrics;
  private readonly entries: Entry[] = [];
  private readonly informers: InformerHandle[] = [];
  /** The informers /readyz waits for: all, unless added with gatesReadiness false. */
  private readonly readinessInformers: InformerHandle[] = [];
  private readonly healthChecks = new Map<string, Check>([['ping', () => true]]);
  private readonly readinessChecks = new Map<string, Check>([
    ['informers-synced', () => this.readinessInformers.every((i) => i.hasSynced())],
    // A cache that stopped following the server (its loop ended, or lists and watches keep
    // failing) serves stale answers: the webhook must not be sent traffic it would answer from it.
    ['informers-healthy', () => this.readinessInformers.every((i) => i.isHealthy())],
  ]);
  private probeServer: ServerHandle | undefined;
  private metricsServer: ServerHandle | undefined;
  private elector: LeaderElector | undefined;
  private started = false;

  constructor(private readonly options: ManagerOptions) {
    this.metrics = options.metrics ?? createRuntimeMetrics();
  }

  add(runnable: Runnable, options: RunnableOptions): void {
    this.entries.push({ runnable, name: options.name, needsLeaderElection: options.needsLeaderElection ?? true });
  }

  /**
   * Runs the informer on every replica (a standby keeps warm caches) and gates /readyz on its sync
   * and health, unless `gatesReadiness` is false: readiness is what sends a pod webhook traffic,
   * and a cache the webhooks do not read must not take them down (the controller itself waits for
   * its caches before it reconciles). The first call for an informer decides.
   */
  addInformer(informer: InformerHandle, options: { readonly gatesReadiness?: boolean } = {}): void {
    if (this.informers.includes(informer)) return;
    this.informers.push(informer);
    if (options.gatesReadiness ?? true) this.readinessInformers.push(informer);
    const resource = informer.type.group === '' ? informer.type.plural : `${informer.type.plural}.${informer.type.group}`;
    this.add(
      {
        start: async (signal) => {
          await informer.start(signal);
          await informer.stopped();
        },
      },
      { name: `informer ${resource}`, needsLeaderElection: false },
    );
  }

  /** Adds the controller (leader only) and its informers (every replica). */
  addController(controller: Controller): void {
    for (const informer of controller.informers()) this.addInformer(informer);
    this.add(controller, { name: `controller ${controller.name}`, needsLeaderElection: true });
  }

  addHealthCheck(name: string, check: Check): void {
    this.healthChecks.set(name, check);
  }

  addReadinessCheck(name: string, check: Check): void {
    this.readinessChecks.set(name, check);
  }

  /** host:port of the probe server once started (port 0 resolved), undefined when disabled. */
  probeAddress(): string | undefined {
    return this.probeServer?.address;
  }

  metricsAddress(): string | undefined {
    return this.metricsServer?.address;
  }

  isLeader(): boolean {
    return this.options.leaderElection === undefined ? true : (this.elector?.isLeader() ?? false);
  }

  /**
   * Runs everything until `signal` aborts, a termination signal arrives, a runnable fails or the
   * lease is lost; then stops everything and waits (up to the graceful timeout; not at all after
   * the lease was lost). Resolves after a requested stop; rejects with the runnable's error or
   * LeadershipLostError otherwise.
   */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.started) throw new Error('the manager was already started');
    this.started = true;
    const { logger } = this.options;
    const stop = new AbortController();
    // Every informer, controller and server listens on this one signal: more than Node's default 10.
    setMaxListeners(0, stop.signal);
    const stopped = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
    const forward = (): void => stop.abort();
    signal?.addEventListener('abort', forward, { once: true });
    if (signal?.aborted === true) stop.abort();
    const removeSignalHandlers = (this.options.handleSignals ?? true) ? this.handleSignals(stop) : () => undefined;

    let failure: unknown;
    let lostLeadership = false;
    const running: Promise<void>[] = [];
    const track = (name: string, work: Promise<void>): Promise<void> =>
      work.catch((err: unknown) => {
        if (failure === undefined) failure = err;
        logger.error('runnable failed, stopping', { runnable: name, err: errorFields(err) });
        stop.abort();
      });
    try {
      if (this.options.processMetrics ?? true) collectProcessMetrics(this.metrics.registry);
      this.probeServer = await startProbeServer({
        address: this.options.healthProbeBindAddress ?? '0',
        healthChecks: this.healthChecks,
        readinessChecks: this.readinessChecks,
      });
      this.metricsServer = await startMetricsServer({ address: this.options.metricsBindAddress ?? '0', registry: this.metrics.registry });
      logger.info('manager starting', {
        probeAddress: this.probeServer?.address,
        metricsAddress: this.metricsServer?.address,
        leaderElection: this.options.leaderElection !== undefined,
      });
      for (const entry of this.entries.filter((e) => !e.needsLeaderElection))
        running.push(track(entry.name, entry.runnable.start(stop.signal)));
      const leaderEntries = this.entries.filter((e) => e.needsLeaderElection);
      const startLeaderWork = (leaderSignal: AbortSignal): Promise<void> =>
        Promise.all(leaderEntries.map((e) => track(e.name, e.runnable.start(leaderSignal)))).then(() => undefined);
      const election = this.options.leaderElection;
      if (election === undefined) {
        running.push(startLeaderWork(stop.signal));
      } else {
        const elector = new LeaderElector({ ...election, logger, metrics: this.metrics });
        this.elector = elector;
        running.push(
          track(
            'leader election',
            elector.run(stop.signal, {
              onStartedLeading: startLeaderWork,
              onStoppedLeading: () => {
                if (!stop.signal.aborted) {
                  lostLeadership = true;
                  this.options.onLeadershipLost?.();
                  stop.abort();
                }
              },
            }),
          ),
        );
      }
      await stopped;
      if (lostLeadership) {
        // As controller-runtime: no graceful shutdown after losing the lease. Whatever is still
        // running has had its signal aborted; waiting for it would only give it time to write.
        logger.error('lost leadership, stopping without waiting for running work');
      } else {
        logger.info('manager stopping');
        await this.waitForRunnables(running);
      }
    } finally {
      stop.abort();
      signal?.removeEventListener('abort', forward);
      removeSignalHandlers();
      await this.probeServer?.close();
      await this.metricsServer?.close();
    }
    if (lostLeadership) throw new LeadershipLostError('leader election lost');
    if (failure !== undefined) throw failure instanceof Error ? failure : new Error('a runnable failed', { cause: failure });
    logger.info('manager stopped');
  }

  private async waitForRunnables(running: Promise<void>[]): Promise<void> {
    const timeoutMs = this.options.gracefulShutdownTimeoutMs ?? 30_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([Promise.all(running).then(() => 'done' as const), timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') this.options.logger.error('graceful shutdown timed out; some work was still running', { timeoutMs });
  }

  /** SIGTERM/SIGINT stop the manager; a second one exits at once (someone is impatient). */
  private handleSignals(stop: AbortController): () => void {
    const onSignal = (name: NodeJS.Signals): void => {
      if (stop.signal.aborted) {
        this.options.logger.warn('second termination signal, exiting now', { signal: name });
        process.exit(1);
      }
      this.options.logger.info('termination signal received', { signal: name });
      stop.abort();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    return () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    };
  }
}
