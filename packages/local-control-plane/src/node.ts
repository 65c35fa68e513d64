import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { access, constants, cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Binaries } from './binaries.js';
import { startControlPlane, stopControlPlane, writeControlPlaneState, type ControlPlaneState } from './control-plane.js';
import { freePort } from './free-port.js';
import { waitHealthy } from './health.js';
import { renderKubeconfig } from './kubeconfig.js';
import { renderCniConfig, renderContainerdConfig, renderKubeProxyConfig, renderKubeletConfig } from './node-config.js';
import { importArchive, sandboxImageArchive } from './node-images.js';
import { nodeLayout, type NodeLayout } from './node-layout.js';
import { acquireNodeLock, recordNodeLockPids, releaseNodeLock } from './node-lock.js';
import { makeKubeletClientPki } from './node-pki.js';
import { bridgeExists, nodeCgroups, type NodeProcesses } from './node-teardown.js';
import { delay, isAlive, spawnLogged, type SpawnedProcess } from './processes.js';

const run = promisify(execFile);

export const NODE_BINARY_NAMES = ['kubelet', 'kube-scheduler', 'kube-proxy'] as const;
export type NodeBinaryName = (typeof NODE_BINARY_NAMES)[number];
export type NodeBinaries = Readonly<Record<NodeBinaryName, string>> & { readonly dir: string };

/** Debian's programs the node runs or calls (hack/install-debian-packages.sh node). */
const HOST_TOOLS = [
  'containerd',
  'containerd-shim-runc-v2',
  'runc',
  'ctr',
  'umoci',
  'skopeo',
  'ip',
  'iptables-save',
  'iptables-restore',
  'openssl',
  'umount',
];
const CNI_PLUGINS = ['/usr/lib/cni/bridge', '/usr/lib/cni/host-local', '/usr/lib/cni/loopback'];

/**
 * kubelet, kube-scheduler and kube-proxy from `hack/build-control-plane.sh --node` (cached like
 * the control plane's), after checking the Debian programs are there.
 */
export async function resolveNodeBinaries(repoRoot: string): Promise<NodeBinaries> {
  const missing: string[] = [];
  for (const tool of HOST_TOOLS) {
    const found = await run('sh', ['-c', `command -v ${tool}`]).then(
      () => true,
      () => false,
    );
    if (!found) missing.push(tool);
  }
  for (const plugin of CNI_PLUGINS) if (!existsSync(plugin)) missing.push(plugin);
  if (missing.length > 0) {
    throw new Error(`the node needs ${missing.join(', ')}: run bash hack/install-debian-packages.sh node (as root)`);
  }
  if (process.getuid?.() !== 0) throw new Error('the node runs containerd and the kubelet, which need root');
  const script = join(repoRoot, 'hack', 'build-control-plane.sh');
  let dir: string;
  try {
    const { stdout } = await run('bash', [script, '--node'], { maxBuffer: 16 * 1024 * 1024, timeout: 80 * 60 * 1000 });
    dir = stdout.trim().split('\n').pop() ?? '';
  } catch (err: unknown) {
    throw new Error(`building the node with ${script} --node failed; run it by hand to see why`, { cause: err });
  }
  const entries = await Promise.all(
    NODE_BINARY_NAMES.map(async (name) => {
      const path = join(dir, name);
      await access(path, constants.X_OK);
      return [name, path] as const;
    }),
  );
  return { dir, ...(Object.fromEntries(entries) as Record<NodeBinaryName, string>) };
}

export interface NodeClusterState extends ControlPlaneState {
  readonly node: {
    readonly name: string;
    /** The host's address on the pod bridge: what pods use to reach programs on the host. */
    readonly hostAddress: string;
    readonly podCidr: string;
    readonly containerdSocket: string;
    readonly dir: string;
  };
}

export interface StartNodeOptions {
  readonly binaries: Binaries;
  readonly nodeBinaries: NodeBinaries;
  readonly stateDir: string;
  readonly ownerPid?: number;
  /**
   * How long to wait for a node another process runs on this machine to stop (one node at a time:
   * node-lock.ts). 0, the default, fails at once, saying which one runs.
   */
  readonly lockWaitMs?: number;
}

/**
 * A one-node cluster: the control plane with node access (startControlPlane), kube-scheduler,
 * containerd, kube-proxy and a kubelet, returned once the node is Ready and kube-proxy has
 * programmed the `kubernetes` Service. Stop it with stopControlPlane (it tears the node down first).
 */
export async function startNodeCluster(options: StartNodeOptions): Promise<NodeClusterState> {
  try {
    return await startNodeClusterSteps(options);
  } catch (err: unknown) {
    // Half a node is no node: stop what started and remove what it made, keeping the logs that
    // the error points at (beside the state directory), then report why.
    const logs = join(options.stateDir, 'logs');
    const kept = `${options.stateDir}.failed-logs`;
    await rm(kept, { recursive: true, force: true });
    if (existsSync(logs)) await cp(logs, kept, { recursive: true });
    await stopControlPlane(options.stateDir);
    await releaseNodeLock(options.stateDir);
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${message.replaceAll(logs, kept)} (logs kept in ${kept})`, { cause: err });
  }
}

async function startNodeClusterSteps(options: StartNodeOptions): Promise<NodeClusterState> {
  const layout = nodeLayout(options.stateDir);
  // containerd listens on <socket>.ttrpc too, and a unix socket path has at most 104 bytes.
  if (Buffer.byteLength(`${layout.containerdSocket}.ttrpc`) > 104) {
    throw new Error(
      `the node's state directory ${options.stateDir} is too deep for containerd's socket (${layout.containerdSocket}.ttrpc > 104 bytes)`,
    );
  }
  await stopControlPlane(options.stateDir);
  await acquireNodeLock(options.stateDir, { waitMs: options.lockWaitMs ?? 0 });
  if (await bridgeExists(layout.bridge)) {
    throw new Error(`a node runs on this machine already (bridge ${layout.bridge} exists): stop it first (npm run cluster:down)`);
  }
  const pki = await makeKubeletClientPki();
  const nodeToken = randomBytes(24).toString('hex');
  const proxyToken = randomBytes(24).toString('hex');
  await createBridge(layout);
  const control = await startControlPlane({
    binaries: options.binaries,
    stateDir: options.stateDir,
    ...(options.ownerPid === undefined ? {} : { ownerPid: options.ownerPid }),
    node: {
      advertiseAddress: layout.hostAddress,
      serviceClusterIpRange: layout.serviceCidr,
      kubeletClientCert: pki.cert,
      kubeletClientKey: pki.key,
      tokens: [
        { token: nodeToken, user: `system:node:${layout.nodeName}`, groups: ['system:nodes'] },
        { token: proxyToken, user: 'system:kube-proxy', groups: [] },
      ],
    },
  }).catch(async (err: unknown) => {
    await run('ip', ['link', 'delete', layout.bridge]).catch(() => undefined);
    throw err;
  });
  // The control plane made the state directory anew: the node's files go in after it.
  await mkdir(layout.pki, { recursive: true });
  const clientCaFile = join(layout.pki, 'kubelet-client-ca.crt');
  await writeFile(clientCaFile, pki.ca);
  const processes: SpawnedProcess[] = [...control.processes];
  const own: { kubelet?: number; kubeProxy?: number; containerd?: number } = {};
  const record = async (): Promise<void> => {
    await writeFile(layout.stateFile, JSON.stringify(own satisfies NodeProcesses));
    await writeControlPlaneState(options.stateDir, { ...control, processes });
  };
  await record();
  const kubeconfigFor = async (name: string, token: string): Promise<string> => {
    const file = join(layout.dir, `${name}.kubeconfig`);
    await writeFile(file, renderKubeconfig({ server: control.server, caData: control.caData, token }), { mode: 0o600 });
    return file;
  };
  const logDir = control.logDir;

  const schedulerPort = await freePort();
  const scheduler = spawnLogged({
    name: 'kube-scheduler',
    command: options.nodeBinaries['kube-scheduler'],
    args: [
      `--kubeconfig=${control.kubeconfig}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      `--secure-port=${schedulerPort}`,
      '--v=1',
    ],
    logFile: join(logDir, 'kube-scheduler.log'),
  });
  processes.push(scheduler);
  await record();

  const containerd = await startContainerd(layout, logDir);
  processes.push(containerd);
  own.containerd = containerd.pid;
  await record();
  await importArchive(layout.containerdSocket, await sandboxImageArchive());

  const proxy = await startKubeProxy(layout, {
    binary: options.nodeBinaries['kube-proxy'],
    kubeconfig: await kubeconfigFor('kube-proxy', proxyToken),
    logDir,
  });
  processes.push(proxy);
  own.kubeProxy = proxy.pid;
  await record();

  await makeCgroupRoot(layout.cgroupRoot);
  const kubelet = await startKubelet(layout, {
    binary: options.nodeBinaries.kubelet,
    kubeconfig: await kubeconfigFor('kubelet', nodeToken),
    clientCaFile,
    logDir,
  });
  processes.push(kubelet);
  own.kubelet = kubelet.pid;
  await record();

  await waitHealthy(
    { url: `https://127.0.0.1:${schedulerPort}/healthz` },
    { timeoutMs: 60_000, what: 'kube-scheduler', logFile: scheduler.logFile, isStillRunning: () => isAlive(scheduler.pid) },
  );
  await waitNodeReady({ kubectl: options.binaries.kubectl, kubeconfig: control.kubeconfig, nodeName: layout.nodeName, kubelet });
  await waitServiceProgrammed(proxy);
  const state: NodeClusterState = {
    ...control,
    processes,
    node: {
      name: layout.nodeName,
      hostAddress: layout.hostAddress,
      podCidr: layout.podCidr,
      containerdSocket: layout.containerdSocket,
      dir: layout.dir,
    },
  };
  await writeControlPlaneState(options.stateDir, state);
  await recordNodeLockPids(
    options.stateDir,
    processes.map((p) => p.pid),
  );
  return state;
}

/** The pod bridge, made before anything else so that the API server can advertise its address. */
async function createBridge(layout: NodeLayout): Promise<void> {
  await run('ip', ['link', 'add', layout.bridge, 'type', 'bridge']);
  await run('ip', ['addr', 'add', `${layout.hostAddress}/${layout.podCidr.split('/')[1] ?? '24'}`, 'dev', layout.bridge]);
  await run('ip', ['link', 'set', layout.bridge, 'up']);
}

/** The kubelet refuses a cgroupRoot that does not exist; cpuset children need cpus and mems. */
async function makeCgroupRoot(cgroupRoot: string): Promise<void> {
  for (const hierarchy of [
    'cpu',
    'cpuacct',
    'cpuset',
    'memory',
    'devices',
    'freezer',
    'blkio',
    'pids',
    'systemd',
    'hugetlb',
    'net_cls',
    'net_prio',
    'perf_event',
  ]) {
    const parent = join('/sys/fs/cgroup', hierarchy);
    if (!existsSync(parent)) continue;
    const dir = join(parent, cgroupRoot);
    await mkdir(dir, { recursive: true });
    if (hierarchy === 'cpuset') {
      for (const file of ['cpuset.cpus', 'cpuset.mems']) await writeFile(join(dir, file), await readFile(join(parent, file)));
    }
  }
  if ((await nodeCgroups(cgroupRoot)).length === 0) throw new Error('no cgroup v1 hierarchy under /sys/fs/cgroup');
}

async function startContainerd(layout: NodeLayout, logDir: string): Promise<SpawnedProcess> {
  await mkdir(layout.cniConfDir, { recursive: true });
  await mkdir(layout.cniIpamDir, { recursive: true });
  await mkdir(dirname(layout.containerdConfig), { recursive: true });
  await writeFile(layout.containerdConfig, renderContainerdConfig(layout));
  await writeFile(join(layout.cniConfDir, '10-metal-l2-node.conflist'), renderCniConfig(layout));
  const proc = spawnLogged({
    name: 'containerd',
    command: 'containerd',
    args: ['--config', layout.containerdConfig],
    logFile: join(logDir, 'containerd.log'),
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await run('ctr', ['--address', layout.containerdSocket, 'version'], { timeout: 5_000 }).then(
      () => true,
      () => false,
    );
    if (ok) return proc;
    if (!isAlive(proc.pid)) throw new Error(`containerd exited during start; see ${proc.logFile}`);
    if (Date.now() > deadline) throw new Error(`containerd did not answer on ${layout.containerdSocket}; see ${proc.logFile}`);
    await delay(200);
  }
}

interface ProgramOptions {
  readonly binary: string;
  readonly kubeconfig: string;
  readonly logDir: string;
}

async function startKubeProxy(layout: NodeLayout, { binary, kubeconfig, logDir }: ProgramOptions): Promise<SpawnedProcess> {
  await writeFile(
    layout.kubeProxyConfig,
    renderKubeProxyConfig(layout, kubeconfig, { healthz: await freePort(), metrics: await freePort() }),
  );
  return spawnLogged({
    name: 'kube-proxy',
    command: binary,
    args: [`--config=${layout.kubeProxyConfig}`, '--v=1'],
    logFile: join(logDir, 'kube-proxy.log'),
  });
}

async function startKubelet(
  layout: NodeLayout,
  { binary, kubeconfig, clientCaFile, logDir }: ProgramOptions & { readonly clientCaFile: string },
): Promise<SpawnedProcess> {
  await mkdir(layout.kubeletRoot, { recursive: true });
  await mkdir(layout.podLogsDir, { recursive: true });
  await writeFile(
    layout.kubeletConfig,
    renderKubeletConfig(layout, { port: await freePort(), healthzPort: await freePort() }, clientCaFile),
  );
  return spawnLogged({
    name: 'kubelet',
    command: binary,
    args: [
      `--config=${layout.kubeletConfig}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${layout.kubeletRoot}`,
      `--hostname-override=${layout.nodeName}`,
      `--node-ip=${layout.hostAddress}`,
      '--v=1',
    ],
    logFile: join(logDir, 'kubelet.log'),
  });
}

async function waitNodeReady(options: {
  readonly kubectl: string;
  readonly kubeconfig: string;
  readonly nodeName: string;
  readonly kubelet: SpawnedProcess;
}): Promise<void> {
  const { kubectl, kubeconfig, nodeName, kubelet } = options;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const { stdout } = await run(kubectl, [
      '--kubeconfig',
      kubeconfig,
      'get',
      'node',
      nodeName,
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
    ]).catch(() => ({
      stdout: '',
    }));
    if (stdout.trim() === 'True') return;
    if (!isAlive(kubelet.pid)) throw new Error(`the kubelet exited during start; see ${kubelet.logFile}`);
    if (Date.now() > deadline) throw new Error(`node ${nodeName} not Ready after 120 s; see ${kubelet.logFile}`);
    await delay(500);
  }
}

/** kube-proxy is useful once the `kubernetes` Service leads somewhere: its chain is in the nat table. */
async function waitServiceProgrammed(proxy: SpawnedProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { stdout } = await run('iptables-save', ['-t', 'nat']).catch(() => ({ stdout: '' }));
    if (stdout.includes('default/kubernetes:https') && stdout.includes('KUBE-SEP-')) return;
    if (!isAlive(proxy.pid)) throw new Error(`kube-proxy exited during start; see ${proxy.logFile}`);
    if (Date.now() > deadline) throw new Error(`kube-proxy did not program the kubernetes Service in 60 s; see ${proxy.logFile}`);
    await delay(500);
  }
}
