import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir, rm, rmdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { NodeLayout } from './node-layout.js';
import { delay, isAlive, stopProcess } from './processes.js';

const run = promisify(execFile);
const CGROUP_MOUNT = '/sys/fs/cgroup';
const CNI_CACHE = '/var/lib/cni/results';
const SHIM_SOCKETS = '/run/containerd/s';
/** Chains the kubelet and kube-proxy make; nothing else on a machine without Kubernetes has them. */
const OWN_CHAIN = /^KUBE-/;

/** The processes node.ts started, in the order teardown stops them. */
export interface NodeProcesses {
  readonly kubelet?: number;
  readonly kubeProxy?: number;
  readonly containerd?: number;
}

/**
 * Stops a node and removes everything it made on the host: the kubelet first (so it restarts
 * nothing), kube-proxy, every container (through containerd, so shims exit cleanly), containerd,
 * anything still in the node's cgroups, then the mounts under the node's directory (pod volumes,
 * overlay root filesystems, network namespaces), the cgroups, the bridge, the KUBE-* iptables
 * chains and the CNI result cache. Safe to run on a half-started or already stopped node.
 */
export async function teardownNode(layout: NodeLayout, processes: NodeProcesses): Promise<void> {
  if (processes.kubelet !== undefined) await stopProcess(processes.kubelet, { graceMs: 5_000 });
  if (processes.kubeProxy !== undefined) await stopProcess(processes.kubeProxy, { graceMs: 5_000 });
  if (processes.containerd !== undefined && isAlive(processes.containerd)) await removeAllTasks(layout.containerdSocket);
  if (processes.containerd !== undefined) await stopProcess(processes.containerd, { graceMs: 5_000 });
  await killLeftoverProcesses(layout);
  await unmountUnder(layout.dir);
  await removeCgroups(layout.cgroupRoot);
  await removeLinks(layout.bridge);
  await removeOwnChains();
  await removeCniCache(layout);
  await removeEmptyShimDirs();
}

async function ctr(socket: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('ctr', ['--address', socket, '-n', 'k8s.io', ...args], { timeout: 30_000 });
  return stdout;
}

/** SIGKILL and delete every task, then every container: each shim exits and removes its socket. */
async function removeAllTasks(socket: string): Promise<void> {
  const ids = async (what: 'tasks' | 'containers'): Promise<string[]> =>
    (await ctr(socket, what, 'ls', '-q').catch(() => ''))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
  for (const id of await ids('tasks')) await ctr(socket, 'tasks', 'kill', '-a', '-s', 'SIGKILL', id).catch(() => '');
  for (const id of await ids('tasks')) await ctr(socket, 'tasks', 'delete', '-f', id).catch(() => '');
  for (const id of await ids('containers')) await ctr(socket, 'containers', 'delete', id).catch(() => '');
}

/** cgroup v1 hierarchies mounted under /sys/fs/cgroup (cpu, memory, name=systemd, ...). */
async function cgroupHierarchies(): Promise<string[]> {
  if (!existsSync(CGROUP_MOUNT)) return [];
  const entries = await readdir(CGROUP_MOUNT, { withFileTypes: true });
  return entries.filter((e) => e.isDirectory()).map((e) => join(CGROUP_MOUNT, e.name));
}

/** Every cgroup directory under the node's root in every hierarchy, deepest first. */
export async function nodeCgroups(cgroupRoot: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) await walk(join(dir, e.name));
    found.push(dir);
  };
  for (const h of await cgroupHierarchies()) {
    const root = join(h, cgroupRoot);
    if (existsSync(root)) await walk(root);
  }
  return found;
}

async function pidsIn(cgroupDirs: readonly string[]): Promise<number[]> {
  const pids = new Set<number>();
  for (const dir of cgroupDirs) {
    const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
    for (const line of text.split('\n')) if (line.trim() !== '') pids.add(Number(line));
  }
  return [...pids];
}

/** Shims of this node's containerd: they carry its socket in their command line. */
export async function nodeShims(socket: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(join('/proc', entry, 'cmdline'), 'utf8').catch(() => '');
    if (cmdline.split('\0').includes(socket) && cmdline.includes('containerd-shim')) pids.push(Number(entry));
  }
  return pids;
}

async function killLeftoverProcesses(layout: NodeLayout): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pids = [...(await pidsIn(await nodeCgroups(layout.cgroupRoot))), ...(await nodeShims(layout.containerdSocket))];
    const alive = pids.filter((pid) => isAlive(pid));
    if (alive.length === 0 || Date.now() > deadline) return;
    for (const pid of alive) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    await delay(100);
  }
}

/** Mount points at or under `prefix`, deepest first (from /proc/self/mountinfo, octal escapes decoded). */
export async function mountsUnder(prefix: string): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  const points = text
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    .map((p) => p.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8))))
    .filter((p) => p === prefix || p.startsWith(`${prefix}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

async function unmountUnder(prefix: string): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const points = await mountsUnder(prefix);
    if (points.length === 0) return;
    for (const p of points) await run('umount', ['-l', p]).catch(() => undefined);
  }
}

async function removeCgroups(cgroupRoot: string): Promise<void> {
  for (const dir of await nodeCgroups(cgroupRoot)) await rmdir(dir).catch(() => undefined);
}

/** The bridge and any veth still attached to it (a veth goes with its namespace normally). */
async function removeLinks(bridge: string): Promise<void> {
  for (const link of await linksOf(bridge)) await run('ip', ['link', 'delete', link]).catch(() => undefined);
  await run('ip', ['link', 'delete', bridge]).catch(() => undefined);
}

/** The bridge (when present) and the links enslaved to it. */
export async function linksOf(bridge: string): Promise<string[]> {
  const { stdout } = await run('ip', ['-o', 'link', 'show', 'master', bridge]).catch(() => ({ stdout: '' }));
  return stdout
    .split('\n')
    .map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined);
}

export async function bridgeExists(bridge: string): Promise<boolean> {
  return run('ip', ['link', 'show', bridge]).then(
    () => true,
    () => false,
  );
}

const TABLES = ['filter', 'nat', 'mangle', 'raw'] as const;
const FAMILIES = [
  { save: 'iptables-save', restore: 'iptables-restore' },
  { save: 'ip6tables-save', restore: 'ip6tables-restore' },
] as const;

/** `<family> <table> <chain>` for every KUBE-* chain in iptables and ip6tables. */
export async function ownChains(): Promise<string[]> {
  const found: string[] = [];
  for (const family of FAMILIES) {
    for (const table of TABLES) {
      for (const line of (await save(family.save, table)).split('\n')) {
        const chain = /^:(\S+)/.exec(line)?.[1];
        if (chain !== undefined && OWN_CHAIN.test(chain)) found.push(`${family.save} ${table} ${chain}`);
      }
    }
  }
  return found;
}

async function save(command: string, table: string): Promise<string> {
  return (await run(command, ['-t', table]).catch(() => ({ stdout: '' }))).stdout;
}

/**
 * Deletes the rules that jump to KUBE-* chains from the built-in chains, then flushes and deletes
 * the KUBE-* chains: one iptables-restore --noflush per table, from iptables-save's own lines.
 */
async function removeOwnChains(): Promise<void> {
  for (const family of FAMILIES) {
    for (const table of TABLES) {
      const lines = (await save(family.save, table)).split('\n');
      const chains = lines.map((l) => /^:(\S+)/.exec(l)?.[1]).filter((c): c is string => c !== undefined && OWN_CHAIN.test(c));
      if (chains.length === 0) continue;
      const jumps = lines.filter((l) => {
        const m = /^-A (\S+) .*-j (\S+)/.exec(l);
        return m !== null && !OWN_CHAIN.test(m[1] ?? '') && OWN_CHAIN.test(m[2] ?? '');
      });
      const script = [
        `*${table}`,
        ...jumps.map((l) => l.replace(/^-A /, '-D ')),
        ...chains.map((c) => `-F ${c}`),
        ...chains.map((c) => `-X ${c}`),
        'COMMIT',
        '',
      ].join('\n');
      await restore(family.restore, script);
    }
  }
}

function restore(command: string, script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, ['--noflush'], (err: Error | null) => (err === null ? resolve() : reject(err)));
    child.stdin?.end(script);
  });
}

/**
 * libcni's result cache (not configurable in containerd 1.6): ours are the entries of our network
 * and the loopback entries of our sandboxes, whose netns path lies under the node's directory.
 */
async function ownCniCacheEntries(layout: NodeLayout): Promise<string[]> {
  const own: string[] = [];
  for (const entry of await readdir(CNI_CACHE).catch(() => [])) {
    const text = await readFile(join(CNI_CACHE, entry), 'utf8').catch(() => '');
    if (entry.startsWith(`${layout.cniNetwork}-`) || text.includes(`${layout.dir}/`)) own.push(entry);
  }
  return own;
}

async function removeCniCache(layout: NodeLayout): Promise<void> {
  for (const entry of await ownCniCacheEntries(layout)) await rm(join(CNI_CACHE, entry), { force: true });
}

/** containerd 1.6 keeps shim sockets in /run/containerd/s whatever its state dir: empty, they go. */
async function removeEmptyShimDirs(): Promise<void> {
  for (const dir of [SHIM_SOCKETS, dirname(SHIM_SOCKETS)]) await rmdir(dir).catch(() => undefined);
}

/** What a stopped node would have left on the host; empty after teardownNode. */
export async function nodeLeftovers(layout: NodeLayout): Promise<string[]> {
  const left: string[] = [];
  for (const p of await mountsUnder(layout.dir)) left.push(`mount ${p}`);
  for (const c of await nodeCgroups(layout.cgroupRoot)) left.push(`cgroup ${c}`);
  for (const pid of await nodeShims(layout.containerdSocket)) left.push(`shim process ${pid}`);
  if (await bridgeExists(layout.bridge)) left.push(`bridge ${layout.bridge}`);
  for (const l of await linksOf(layout.bridge)) left.push(`link ${l}`);
  for (const c of await ownChains()) left.push(`chain ${c}`);
  for (const entry of await ownCniCacheEntries(layout)) left.push(`cni cache ${entry}`);
  for (const entry of await readdir(SHIM_SOCKETS).catch(() => [])) left.push(`shim socket ${entry}`);
  return left;
}
