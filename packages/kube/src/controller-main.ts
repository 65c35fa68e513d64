// What both controller binaries do around their own wiring: parse flags, build the root logger,
// the API client, metrics and the event recorder, run everything under a manager (with leader
// election unless turned off), and turn the outcome into an exit code. And the same runnables
// started in-process without leader election, for tests and embedding.
import { KubeClient } from './client/kube-client.js';
import { loadKubeConfig, type ClusterAccess } from './client/kube-config.js';
import { EventRecorder } from './events.js';
import { podNamespace, type RuntimeFlags } from './flags.js';
import { leaderIdentity } from './leader-election.js';
import { createLogger, errorFields, type Logger } from './log.js';
import { LeadershipLostError, Manager } from './manager.js';
import { createRuntimeMetrics, type RuntimeMetrics } from './metrics.js';

/** What a controller's wiring gets from the main function. */
export interface ControllerDeps<F> {
  readonly flags: F;
  readonly client: KubeClient;
  readonly kubeConfig: ClusterAccess;
  readonly logger: Logger;
  readonly metrics: RuntimeMetrics;
  readonly events: EventRecorder;
}

export interface ControllerMainOptions<F extends RuntimeFlags & { readonly leaderElectionId: string }> {
  /** The binary's name: log component, field manager, event source. */
  readonly component: string;
  readonly argv: readonly string[];
  readonly usage: string;
  readonly parseFlags: (argv: readonly string[]) => F | 'help';
  /** Builds the controller's runnables and adds them to the manager. */
  readonly wire: (manager: Manager, deps: ControllerDeps<F>) => Promise<void>;
}

/**
 * Runs a controller binary until SIGTERM/SIGINT or lost leadership; returns the exit code
 * (0 stopped, 1 failed or lost leadership, 2 bad flags).
 */
export async function runControllerMain<F extends RuntimeFlags & { readonly leaderElectionId: string }>(
  options: ControllerMainOptions<F>,
): Promise<number> {
  let flags: F | 'help';
  try {
    flags = options.parseFlags(options.argv);
  } catch (err: unknown) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${options.usage}`);
    return 2;
  }
  if (flags === 'help') {
    process.stdout.write(options.usage);
    return 0;
  }
  const { component } = options;
  const logger = createLogger({ level: flags.logLevel, format: flags.logFormat, fields: { component } });
  const kubeConfig = await loadKubeConfig({ kubeconfig: flags.kubeconfig });
  const client = KubeClient.fromKubeConfig(kubeConfig, { fieldManager: component });
  const metrics = createRuntimeMetrics();
  const identity = leaderIdentity();
  const events = new EventRecorder({ client, component, instance: identity, logger });
  const electionNamespace = flags.leaderElectionNamespace ?? podNamespace();
  if (flags.leaderElect && electionNamespace === undefined) {
    logger.error('leader election needs a namespace: pass --leader-election-namespace or run in a pod', {});
    return 2;
  }
  const manager = new Manager({
    logger,
    metrics,
    metricsBindAddress: flags.metricsBindAddress,
    healthProbeBindAddress: flags.healthProbeBindAddress,
    gracefulShutdownTimeoutMs: flags.gracefulShutdownTimeoutSeconds * 1000,
    ...(flags.leaderElect && electionNamespace !== undefined
      ? { leaderElection: { client, namespace: electionNamespace, name: flags.leaderElectionId, identity } }
      : {}),
    onLeadershipLost: () => exitOnLostLeadership(logger),
  });
  try {
    await options.wire(manager, { flags, client, kubeConfig, logger, metrics, events });
    await manager.start();
    return 0;
  } catch (err: unknown) {
    logger.error(err instanceof LeadershipLostError ? 'lost leadership, exiting' : 'controller failed', { err: errorFields(err) });
    return 1;
  } finally {
    client.close();
  }
}

/**
 * Ends the process at once, from inside the elector's callback: no await in between, so no
 * reconcile continuation, retry timer or queued event write runs after the lease is gone. The
 * log line is written synchronously (winston's console transport) before the exit.
 */
function exitOnLostLeadership(logger: Logger): never {
  logger.error('lost leadership, exiting', { exitCode: 1 });
  process.exit(1);
}

export interface InProcessController {
  stop(): Promise<void>;
}

/**
 * Starts a manager without leader election or signal handling and resolves once `ready()` holds
 * (caches synced, webhook listening), or rejects with why the manager stopped first.
 */
export async function startInProcess(options: {
  readonly logger: Logger;
  readonly client: KubeClient;
  readonly add: (manager: Manager) => void;
  readonly ready: () => boolean;
}): Promise<InProcessController> {
  const manager = new Manager({ logger: options.logger, handleSignals: false, processMetrics: false });
  options.add(manager);
  const abort = new AbortController();
  const running = manager.start(abort.signal);
  const failed = running.then(
    () => new Error('the manager stopped before the controller was ready'),
    (err: unknown) => err,
  );
  const ready = (async (): Promise<void> => {
    while (!options.ready()) await new Promise((resolve) => setTimeout(resolve, 20));
  })();
  const first = await Promise.race([ready.then(() => undefined), failed]);
  if (first !== undefined) {
    abort.abort();
    options.client.close();
    throw first instanceof Error ? first : new Error('the controller failed to start', { cause: first });
  }
  return {
    stop: async () => {
      abort.abort();
      await running.catch(() => undefined);
      options.client.close();
    },
  };
}
