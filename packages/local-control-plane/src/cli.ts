#!/usr/bin/env node
// `metal-l2-cluster up [--node]|down|status`: the long-lived local control plane behind
// `npm run cluster:up`; with --node a one-node cluster (kube-scheduler, containerd, kube-proxy, a
// kubelet) that runs pods, for `helm install` of the chart (needs root and the `node` Debian packages).
// State lives in <repo>/.local/cluster; the kubeconfig is copied to .local/kubeconfig and kubectl
// and helm are linked into .local/bin so the README's commands work as written. METAL_L2_LOCAL moves
// .local, as it does for the demo (test/demo runs `demo:down` on a node of its own that way).
import { realpathSync } from 'node:fs';
import { copyFile, mkdir, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveBinaries } from './binaries.js';
import { isRunning, readControlPlaneState, startControlPlane, stopControlPlane } from './control-plane.js';
import { resolveNodeBinaries, startNodeCluster } from './node.js';
import { NODE_NAME } from './node-layout.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const local = process.env['METAL_L2_LOCAL'] ?? join(repoRoot, '.local');
// A link (test/demo links its own node's directory here) is followed: teardown finds the node's
// mounts by their real path.
const stateDir = resolveLink(join(local, 'cluster'));
const kubeconfigLink = join(local, 'kubeconfig');
const binDir = join(local, 'bin');

function resolveLink(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

async function up(): Promise<void> {
  const existing = await readControlPlaneState(stateDir);
  if (existing !== undefined && (await isRunning(existing))) {
    console.log(`already running at ${existing.server}`);
    printWhere(existing.logDir);
    return;
  }
  if (existing !== undefined) console.log('found a stopped or partly running control plane; cleaning it up');
  const binaries = await resolveBinaries(repoRoot);
  const withNode = process.argv.includes('--node');
  const nodeBinaries = withNode ? await resolveNodeBinaries(repoRoot) : undefined;
  const node = nodeBinaries === undefined ? undefined : await startNodeCluster({ binaries, nodeBinaries, stateDir });
  const state = node ?? (await startControlPlane({ binaries, stateDir }));
  await copyFile(state.kubeconfig, kubeconfigLink);
  await mkdir(binDir, { recursive: true });
  const links: [string, string][] = [
    ...(['kubectl', 'helm', 'etcd', 'kube-apiserver', 'kube-controller-manager'] as const).map((t): [string, string] => [t, binaries[t]]),
    ...(nodeBinaries === undefined
      ? []
      : (['kubelet', 'kube-scheduler', 'kube-proxy'] as const).map((t): [string, string] => [t, nodeBinaries[t]])),
  ];
  for (const [tool, target] of links) {
    const link = join(binDir, tool);
    await rm(link, { force: true });
    await symlink(target, link);
  }
  console.log(`control plane ready at ${state.server}`);
  if (node !== undefined) console.log(`node ${node.node.name} Ready; pods reach this host at ${node.node.hostAddress}`);
  printWhere(state.logDir);
}

function printWhere(logDir: string): void {
  console.log(`kubeconfig: ${kubeconfigLink}`);
  console.log(`tools:      ${binDir}/kubectl, ${binDir}/helm`);
  console.log(`logs:       ${logDir}/{etcd,kube-apiserver,kube-controller-manager}.log`);
  console.log(`try:        ${binDir}/kubectl --kubeconfig ${kubeconfigLink} get --raw /version`);
}

async function down(): Promise<void> {
  const { node } = await stopControlPlane(stateDir);
  await rm(kubeconfigLink, { force: true });
  console.log('control plane stopped and its data removed');
  if (node === undefined) return;
  if (node.leftovers.length > 0) {
    process.exitCode = 1;
    console.error(`node ${NODE_NAME} torn down, but these are left on the host:\n  ${node.leftovers.join('\n  ')}`);
  } else {
    console.log(`node ${NODE_NAME} torn down: no container, mount, cgroup, bridge, iptables chain or CNI cache entry of it left`);
  }
}

async function status(): Promise<void> {
  const state = await readControlPlaneState(stateDir);
  if (state === undefined) {
    console.log('not running');
    process.exitCode = 1;
    return;
  }
  const running = await isRunning(state);
  console.log(running ? `running at ${state.server}` : 'not running (stale state; `up` cleans it)');
  if (!running) process.exitCode = 1;
  printWhere(state.logDir);
}

const commands: Record<string, () => Promise<void>> = { up, down, status };
const command = commands[process.argv[2] ?? ''];
if (command === undefined) {
  console.error('usage: metal-l2-cluster up [--node]|down|status');
  process.exitCode = 2;
} else {
  command().catch((err: unknown) => {
    console.error(err instanceof Error ? `${err.message}${err.cause instanceof Error ? `: ${err.cause.message}` : ''}` : err);
    process.exitCode = 1;
  });
}
