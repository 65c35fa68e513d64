import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Binaries } from './binaries.js';
import { nodeLayout } from './node-layout.js';
import { releaseNodeLock } from './node-lock.js';
import { nodeLeftovers, teardownNode, type NodeProcesses } from './node-teardown.js';
import { freePort } from './free-port.js';
import { probeOnce, waitHealthy } from './health.js';
import { renderKubeconfig } from './kubeconfig.js';
import { isAlive, spawnLogged, stopProcess, type SpawnedProcess } from './processes.js';

/** What a running control plane leaves in its state directory, so another process can find or stop it. */
export interface ControlPlaneState {
  readonly server: string;
  readonly token: string;
  readonly caData: string;
  readonly kubeconfig: string;
  readonly logDir: string;
  readonly processes: readonly SpawnedProcess[];
  readonly startedAt: string;
  /** The process that owns this control plane; a test run's owner is the jest process. */
  readonly ownerPid?: number;
}

export interface StartOptions {
  readonly binaries: Binaries;
  /** Holds etcd data, certificates, logs, the kubeconfig and state.json. Wiped on start. */
  readonly stateDir: string;
  readonly ownerPid?: number;
  readonly startTimeoutMs?: number;
  /** More kube-apiserver flags (an audit log, admission plugins), after the defaults. */
  readonly extraApiServerArgs?: readonly string[];
  /** Serve a kubelet: see NodeAccess. Without it there are no nodes and no pods. */
  readonly node?: NodeAccess;
  /** Where each process's port comes from (default freePort); a test hands out a taken one to prove the retry. */
  readonly freePort?: () => Promise<number>;
}

/**
 * What the API server and kube-controller-manager need for a real node (node.ts): pods reach the
 * API server through the `kubernetes` Service at the node bridge's address, the kubelet and
 * kube-proxy authenticate with their own tokens, the API server authenticates to the kubelet with a
 * client certificate (kubectl logs/exec), and ServiceAccount admission and token signing work.
 */
export interface NodeAccess {
  readonly advertiseAddress: string;
  readonly serviceClusterIpRange: string;
  /** PEM: the API server's client certificate and key towards the kubelet. */
  readonly kubeletClientCert: string;
  readonly kubeletClientKey: string;
  readonly tokens: readonly { readonly token: string; readonly user: string; readonly groups: readonly string[] }[];
}

/** The kube-controller-manager controllers behind Deployments, Services, ServiceAccounts, PDBs and nodes. */
const NODE_CONTROLLERS = [
  'garbagecollector',
  'namespace',
  'deployment',
  'replicaset',
  'endpoint',
  'endpointslice',
  'endpointslicemirroring',
  'serviceaccount',
  'serviceaccount-token',
  'root-ca-cert-publisher',
  'disruption',
  'nodelifecycle',
  'podgc',
  'ttl',
];

function apiServerNodeArgs(node: NodeAccess | undefined, pki: string): string[] {
  if (node === undefined) {
    return [
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      '--endpoint-reconciler-type=none',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--authorization-mode=RBAC',
      '--disable-admission-plugins=ServiceAccount',
    ];
  }
  return [
    // Pods reach the API server at the bridge address, the host's clients at 127.0.0.1.
    '--bind-address=0.0.0.0',
    `--advertise-address=${node.advertiseAddress}`,
    '--endpoint-reconciler-type=lease',
    `--service-cluster-ip-range=${node.serviceClusterIpRange}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    `--kubelet-client-certificate=${join(pki, 'kubelet-client.crt')}`,
    `--kubelet-client-key=${join(pki, 'kubelet-client.key')}`,
    '--kubelet-preferred-address-types=InternalIP',
  ];
}

const STATE_FILE = 'state.json';

/**
 * Starts etcd, then kube-apiserver (RBAC, service-account issuer and keys, static admin token,
 * loopback only), then kube-controller-manager with only the garbage-collector and namespace
 * controllers, waiting for each to be healthy. Anything left in `stateDir` from an earlier run
 * (a crash, a second start) is stopped and removed first. A port found free can be taken before
 * the process binds it (freePort is racy by nature): a start that fails because a process could
 * not bind its port starts again on fresh ports, keeping that attempt's logs beside the new ones.
 */
export async function startControlPlane(options: StartOptions): Promise<ControlPlaneState> {
  const { stateDir } = options;
  await stopControlPlane(stateDir);
  const pki = join(stateDir, 'pki');
  const logDir = join(stateDir, 'logs');
  await mkdir(pki, { recursive: true });
  await mkdir(logDir, { recursive: true });

  const token = randomBytes(24).toString('hex');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const saKey = join(pki, 'sa.key');
  await writeFile(saKey, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const tokenFile = join(pki, 'tokens.csv');
  const tokenLines = [
    `${token},admin,admin,"system:masters"`,
    ...(options.node?.tokens ?? []).map((t) => `${t.token},${t.user},${t.user},"${t.groups.join(',')}"`),
  ];
  await writeFile(tokenFile, `${tokenLines.join('\n')}\n`, { mode: 0o600 });
  if (options.node !== undefined) {
    await writeFile(join(pki, 'kubelet-client.crt'), options.node.kubeletClientCert);
    await writeFile(join(pki, 'kubelet-client.key'), options.node.kubeletClientKey, { mode: 0o600 });
  }

  const files: StartFiles = { pki, logDir, saKey, tokenFile, token };
  for (let attempt = 1; ; attempt++) {
    const processes: SpawnedProcess[] = [];
    try {
      return await startProcesses(options, files, processes);
    } catch (err: unknown) {
      await Promise.all(processes.map((p) => stopProcess(p.pid, { graceMs: 2_000 })));
      const lost = await portRaceLost(processes);
      if (lost === undefined || attempt >= PORT_ATTEMPTS) throw err;
      process.stderr.write(`control plane in ${stateDir}: ${lost.name} lost its port to another process; starting again on fresh ports\n`);
      // etcd's data names its peer URL; the next attempt's is another port.
      await rm(join(stateDir, 'etcd'), { recursive: true, force: true });
      for (const p of processes) await rename(p.logFile, `${p.logFile}.attempt-${attempt}`);
    }
  }
}

/** Starts lost to a port taken between freePort's check and the bind, before giving up. */
const PORT_ATTEMPTS = 3;

/** The process of a failed start whose log says it could not bind its port. */
async function portRaceLost(processes: readonly SpawnedProcess[]): Promise<SpawnedProcess | undefined> {
  for (const p of processes) {
    const log = await readFile(p.logFile, 'utf8').catch(() => '');
    if (/bind: address already in use/.test(log)) return p;
  }
  return undefined;
}

interface StartFiles {
  readonly pki: string;
  readonly logDir: string;
  readonly saKey: string;
  readonly tokenFile: string;
  readonly token: string;
}

/** One attempt: the three processes on fresh ports, each recorded in `processes` as it starts. */
async function startProcesses(options: StartOptions, files: StartFiles, processes: SpawnedProcess[]): Promise<ControlPlaneState> {
  const { binaries, stateDir } = options;
  const { pki, logDir, saKey, tokenFile, token } = files;
  const timeoutMs = options.startTimeoutMs ?? 90_000;
  const ports = options.freePort ?? freePort;
  const record = async (extra: Partial<ControlPlaneState> = {}): Promise<void> => {
    const partial = { processes, logDir, startedAt: new Date().toISOString(), ownerPid: options.ownerPid, ...extra };
    await writeFile(join(stateDir, STATE_FILE), JSON.stringify(partial, null, 2));
  };

  const etcdPort = await ports();
  const etcdPeerPort = await ports();
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const etcdLog = join(logDir, 'etcd.log');
  const etcd = spawnLogged({
    name: 'etcd',
    command: binaries.etcd,
    args: [
      `--data-dir=${join(stateDir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${etcdPeerPort}`,
      '--unsafe-no-fsync=true',
      '--quota-backend-bytes=4294967296',
      '--log-level=warn',
    ],
    logFile: etcdLog,
  });
  processes.push(etcd);
  await record();
  await waitHealthy({ url: `${etcdUrl}/health` }, { timeoutMs, what: 'etcd', logFile: etcdLog, isStillRunning: () => isAlive(etcd.pid) });

  const apiPort = await ports();
  // The self-signed serving certificate names the advertise address (and the Service IP), not
  // 127.0.0.1 when a node advertises the bridge's: clients then use that address too.
  const server = `https://${options.node?.advertiseAddress ?? '127.0.0.1'}:${apiPort}`;
  const apiLog = join(logDir, 'kube-apiserver.log');
  const apiserver = spawnLogged({
    name: 'kube-apiserver',
    command: binaries['kube-apiserver'],
    args: [
      `--etcd-servers=${etcdUrl}`,
      ...apiServerNodeArgs(options.node, pki),
      `--secure-port=${apiPort}`,
      `--cert-dir=${pki}`,
      `--service-account-issuer=${server}`,
      `--service-account-key-file=${saKey}`,
      `--service-account-signing-key-file=${saKey}`,
      `--token-auth-file=${tokenFile}`,
      '--allow-privileged=true',
      '--v=1',
      ...(options.extraApiServerArgs ?? []),
    ],
    logFile: apiLog,
  });
  processes.push(apiserver);
  await record();
  await waitHealthy(
    { url: `${server}/readyz`, token },
    { timeoutMs, what: 'kube-apiserver', logFile: apiLog, isStillRunning: () => isAlive(apiserver.pid) },
  );
  // kube-apiserver self-signs its serving certificate into --cert-dir on first start; the file
  // holds the certificate and its CA, which is what clients must trust.
  const caData = (await readFile(join(pki, 'apiserver.crt'))).toString('base64');
  const kubeconfig = join(stateDir, 'kubeconfig');
  await writeFile(kubeconfig, renderKubeconfig({ server, caData, token }), { mode: 0o600 });

  const kcmPort = await ports();
  const kcmLog = join(logDir, 'kube-controller-manager.log');
  const kcm = spawnLogged({
    name: 'kube-controller-manager',
    command: binaries['kube-controller-manager'],
    args: [
      `--kubeconfig=${kubeconfig}`,
      ...(options.node === undefined
        ? ['--controllers=garbagecollector,namespace']
        : [
            `--controllers=${NODE_CONTROLLERS.join(',')}`,
            `--root-ca-file=${join(pki, 'apiserver.crt')}`,
            `--service-account-private-key-file=${saKey}`,
            `--service-cluster-ip-range=${options.node.serviceClusterIpRange}`,
            '--node-monitor-grace-period=40s',
          ]),
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${kcmPort}`,
      '--v=1',
    ],
    logFile: kcmLog,
  });
  processes.push(kcm);
  await waitHealthy(
    { url: `https://127.0.0.1:${kcmPort}/healthz` },
    { timeoutMs, what: 'kube-controller-manager', logFile: kcmLog, isStillRunning: () => isAlive(kcm.pid) },
  );
  const state: ControlPlaneState = {
    server,
    token,
    caData,
    kubeconfig,
    logDir,
    processes,
    startedAt: new Date().toISOString(),
    ...(options.ownerPid === undefined ? {} : { ownerPid: options.ownerPid }),
  };
  await writeFile(join(stateDir, STATE_FILE), JSON.stringify(state, null, 2));
  return state;
}

/** Reads state.json; undefined when there is none (never started, or stopped). */
export async function readControlPlaneState(stateDir: string): Promise<ControlPlaneState | undefined> {
  const file = join(stateDir, STATE_FILE);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(await readFile(file, 'utf8')) as ControlPlaneState;
  } catch {
    return undefined;
  }
}

/** True when every process of the recorded control plane runs and the API server answers /readyz. */
export async function isRunning(state: ControlPlaneState): Promise<boolean> {
  if (state.processes.length < 3 || !state.processes.every((p) => isAlive(p.pid))) return false;
  return (await probeOnce({ url: `${state.server}/readyz`, token: state.token })) === 200;
}

/** Writes state.json (node.ts records the node's processes beside the control plane's). */
export async function writeControlPlaneState(stateDir: string, state: ControlPlaneState): Promise<void> {
  await writeFile(join(stateDir, STATE_FILE), JSON.stringify(state, null, 2));
}

/** What a stop found: for a node, what its teardown left on the host (empty when nothing). */
export interface StopResult {
  readonly node?: { readonly leftovers: readonly string[] };
}

/**
 * Stops whatever state.json records (in reverse start order) and removes the state directory; a
 * node (node.json) is torn down first, so that no mount, cgroup, link or iptables chain stays.
 * What is left is looked for before the node lock goes: the next node takes the same bridge and
 * chain names, so a check after the release could find that node's.
 */
export async function stopControlPlane(stateDir: string): Promise<StopResult> {
  const layout = nodeLayout(stateDir);
  let result: StopResult = {};
  if (existsSync(layout.stateFile)) {
    const processes = JSON.parse(await readFile(layout.stateFile, 'utf8').catch(() => '{}')) as NodeProcesses;
    await teardownNode(layout, processes);
    result = { node: { leftovers: await nodeLeftovers(layout) } };
    await releaseNodeLock(stateDir);
  }
  const state = await readControlPlaneState(stateDir);
  if (state !== undefined) {
    for (const p of [...state.processes].reverse()) await stopProcess(p.pid);
  }
  await rm(stateDir, { recursive: true, force: true });
  return result;
}

/**
 * Stops one process of a running control plane and starts it again with the same arguments (same
 * ports, same data), then waits until the control plane answers again: for tests of what clients
 * do when, say, the API server restarts under them.
 */
export async function restartProcess(
  stateDir: string,
  name: 'etcd' | 'kube-apiserver' | 'kube-controller-manager',
): Promise<ControlPlaneState> {
  const state = await readControlPlaneState(stateDir);
  const old = state?.processes.find((p) => p.name === name);
  if (state === undefined || old === undefined) throw new Error(`no running ${name} recorded in ${stateDir}`);
  await stopProcess(old.pid);
  const fresh = spawnLogged({ name, command: old.command, args: old.args, logFile: old.logFile });
  const next: ControlPlaneState = { ...state, processes: state.processes.map((p) => (p.name === name ? fresh : p)) };
  await writeFile(join(stateDir, STATE_FILE), JSON.stringify(next, null, 2));
  await waitHealthy(
    { url: `${state.server}/readyz`, token: state.token },
    { timeoutMs: 90_000, what: 'kube-apiserver', logFile: old.logFile, isStillRunning: () => isAlive(fresh.pid) },
  );
  return next;
}
