// The controllers under test, each run as a child process against a bench control plane: our IPAM
// controller (node packages/ipam-controller/dist/main.js), our network controller
// (node packages/network-controller/dist/main.js) and the reference in-cluster provider built by
// hack/build-reference-ipam.sh. Their logs are kept under the OS temp folder for a post-mortem.
import { execFile, spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { benchLogDir as logDir, repoRoot } from './cluster.js';

const children = new Set();

/** Peak and current resident set size of a process, in KiB, from /proc/<pid>/status. */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peakKiB: field('VmHWM'), currentKiB: field('VmRSS') };
  } catch {
    return { peakKiB: NaN, currentKiB: NaN };
  }
}

function tail(file, lines = 15) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

function startChild({ name, command, args, shown }) {
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(command, args, { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited;
  const exit = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    });
    child.once('error', (err) => {
      exited = { code: null, signal: null, error: err };
      resolve(exited);
    });
  });
  const handle = {
    name,
    pid: child.pid,
    logFile,
    /** The command line as shown in tables: shortened paths, the kubeconfig as <kubeconfig>. */
    command: shown,
    /** Throws with the log's tail when the process has died. */
    assertAlive() {
      if (exited !== undefined) {
        throw new Error(
          `${name} exited (${exited.error?.message ?? `code ${exited.code}, signal ${exited.signal}`}); log ${logFile}:\n${tail(logFile)}`,
        );
      }
    },
    memory: () => memoryOf(child.pid),
    stop: async () => {
      children.delete(handle);
      if (exited !== undefined) return;
      const started = Date.now();
      child.kill('SIGTERM');
      const done = await Promise.race([exit, sleep(10_000).then(() => undefined)]);
      if (done === undefined) {
        process.stderr.write(`  ${name} did not stop within 10 s of SIGTERM; sending SIGKILL\n`);
        child.kill('SIGKILL');
        await exit;
      } else {
        process.stderr.write(`  ${name} stopped ${Date.now() - started} ms after SIGTERM\n`);
      }
    },
  };
  children.add(handle);
  return handle;
}

/** For an interrupted run: stops every controller this process started. */
export async function stopAllControllers() {
  await Promise.all([...children].map((c) => c.stop()));
}

/**
 * A heap budget that fits the chart's pod (limits.memory 256Mi). On the bench machine (many GiB,
 * no limit) V8 would allow a 4 GiB old generation and, its collections being cheap, grow the heap
 * up to 4x past the live data before a full collection (330 MB of heap for 77 MB live at 10,000
 * claims), which says nothing about the pod: there Node sizes V8's heap from the container's limit
 * (and a small maximum makes V8 grow the heap in small steps). 192 MB leaves the rest of 256 MiB
 * for code, the young generation and buffers; the young generation is held to 2 MiB a semi-space,
 * as the chart does (NODE_OPTIONS). A --max-old-space-size in
 * METAL_L2_BENCH_CONTROLLER_NODE_ARGS replaces it.
 */
export const POD_HEAP_MIB = 192;
const podHeapArgs = [`--max-old-space-size=${POD_HEAP_MIB}`, '--max-semi-space-size=2'];

/** The network controller's, as its chart sets it (network.heapLimitMi 288 for limits.memory 384Mi). */
const networkPodHeapArgs = ['--max-old-space-size=288', '--max-semi-space-size=2'];

/** METAL_L2_BENCH_CONTROLLER_NODE_ARGS after the pod's heap budget, unless it sets its own. */
function nodeArgsWith(heapArgs) {
  const extra = (process.env['METAL_L2_BENCH_CONTROLLER_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
  return [...(extra.some((a) => a.startsWith('--max-old-space-size')) ? [] : heapArgs), ...extra];
}

/** `heapMiB` replaces the pod's heap budget; `flags` are added to the controller's. */
/** @param {{ kubeconfig: string, namespace: string, heapMiB?: number, flags?: string[] }} options */
export function startOurController({ kubeconfig, namespace, heapMiB = undefined, flags: extraFlags = [] }) {
  const main = join('packages', 'ipam-controller', 'dist', 'main.js');
  const nodeArgs = nodeArgsWith(heapMiB === undefined ? podHeapArgs : [`--max-old-space-size=${heapMiB}`, '--max-semi-space-size=2']);
  const flags = (config) => [
    '--kubeconfig',
    config,
    '--namespace',
    namespace,
    '--leader-elect=false',
    '--metrics-bind-address',
    '0',
    '--health-probe-bind-address',
    '0',
    '--webhook-port',
    '0',
    '--log-level',
    'warn',
    ...extraFlags,
  ];
  return startChild({
    name: 'metal-l2-ipam-controller',
    command: process.execPath,
    // For a post-mortem, e.g. METAL_L2_BENCH_CONTROLLER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof".
    args: [...nodeArgs, join(repoRoot, main), ...flags(kubeconfig)],
    shown: ['node', ...nodeArgs, main, ...flags('<kubeconfig>')].join(' '),
  });
}

/** A TCP port free on 127.0.0.1 right now (for a child's metrics and health endpoints). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error('the probe server has no TCP address'));
        return;
      }
      const { port } = address;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Our network controller without its webhooks (--webhook-port 0), leader election off, metrics and
 * health probes on the given local ports, the default Metal credentials from `credentials`
 * (namespace/name). `logLevel` debug logs one "reconciled" line per reconcile. `extraFlags` go
 * after the others (e.g. a short --drift-check-interval-seconds).
 */
export function startNetworkController({
  kubeconfig,
  namespace,
  metalApiUrl,
  metadataUrl,
  credentials,
  metricsPort,
  healthPort,
  logLevel = 'info',
  extraFlags = /** @type {string[]} */ ([]),
}) {
  const main = join('packages', 'network-controller', 'dist', 'main.js');
  const nodeArgs = nodeArgsWith(networkPodHeapArgs);
  // Shown in tables with placeholders for what changes from run to run.
  const flags = (shown) => [
    '--kubeconfig',
    shown ? '<kubeconfig>' : kubeconfig,
    ...(namespace === undefined ? [] : ['--namespace', namespace]),
    '--leader-elect=false',
    '--webhook-port',
    '0',
    '--metal-api-url',
    shown ? '<simulator>/metal/v1' : metalApiUrl,
    '--metal-credentials-secret',
    credentials,
    '--metadata-url',
    shown ? '<simulator>/metadata' : metadataUrl,
    '--metrics-bind-address',
    `127.0.0.1:${shown ? '<free port>' : metricsPort}`,
    '--health-probe-bind-address',
    `127.0.0.1:${shown ? '<free port>' : healthPort}`,
    '--log-level',
    logLevel,
    ...extraFlags,
  ];
  const handle = startChild({
    name: 'metal-l2-network-controller',
    command: process.execPath,
    args: [...nodeArgs, join(repoRoot, main), ...flags(false)],
    shown: ['node', ...nodeArgs, main, ...flags(true)].join(' '),
  });
  return { ...handle, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, readyzUrl: `http://127.0.0.1:${healthPort}/readyz` };
}

const run = promisify(execFile);

/**
 * Builds (or finds cached) a release of the reference provider with hack/build-reference-ipam.sh.
 * Returns { binary } or { error } with the reason, so the bench can report it and carry on.
 */
export async function buildReference(version) {
  const script = join(repoRoot, 'hack', 'build-reference-ipam.sh');
  try {
    const { stdout } = await run('bash', [script], {
      maxBuffer: 16 * 1024 * 1024,
      timeout: 40 * 60 * 1000,
      env: { ...process.env, REFERENCE_IPAM_VERSION: version },
    });
    return { binary: stdout.trim().split('\n').pop() };
  } catch (caught) {
    /** @type {{ stderr?: unknown, code?: unknown, signal?: unknown, message?: string }} */
    const err = caught instanceof Error ? caught : { message: String(caught) };
    const stderr = String(err.stderr ?? '')
      .trimEnd()
      .split('\n')
      .slice(-8)
      .join('\n');
    return {
      error: `REFERENCE_IPAM_VERSION=${version} bash hack/build-reference-ipam.sh failed (${err.code ?? err.signal ?? err.message})${stderr === '' ? '' : `:\n${stderr}`}`,
    };
  }
}

/**
 * A release of the reference provider (references.js) with its webhooks off (--webhook-port 0
 * skips registering them), metrics, health probes and leader election off, watching one namespace.
 * Its client keeps the controller-runtime defaults (20 QPS, burst 30): it has no flag to change them.
 */
export function startReferenceController({ binary, reference, kubeconfig, namespace }) {
  const shown = binary.replace(homedir(), '~');
  return startChild({
    name: `reference-in-cluster-ipam-${reference.version}`,
    command: binary,
    args: reference.flags(kubeconfig, namespace),
    shown: [shown, ...reference.flags('<kubeconfig>', namespace)].join(' '),
  });
}
