import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  IMAGE_REPOSITORY,
  RELEASE_NAMESPACE,
  controllerDeployments,
  deploymentAvailable,
  nodeLayout,
  mountsUnder,
  stopControlPlane,
  type BuiltImage,
  type DeploymentView,
} from '@metal-l2/local-control-plane';
import { buildImage, kubectl, startNodeWorld, type NodeWorld } from '@metal-l2/test-support/node-world';
import { alive, expectEveryMachineReady, readDemoState, runDemoScript } from './support/demo-run.js';

// `npm run demo -- --in-cluster` as a user runs it, on a node of its own: the demo's state under
// METAL_L2_LOCAL, with the node's directory, kubeconfig, kubectl and helm linked where
// `cluster:up -- --node` puts them, and the image built into its image/ (as `npm run image` does
// into .local/image). The same end state as the process demo, with the controllers as pods; then
// `demo:down` without --keep-cluster: helm uninstall, then the node torn down, nothing left.
// test/node starts a node too: one node runs on a machine at a time (node-lock.ts), so whichever
// suite comes second waits in startNodeWorld.

const run = promisify(execFile);
const CONTROLLER_SCRIPTS = ['/app/packages/ipam-controller/dist/main.js', '/app/packages/network-controller/dist/main.js'];

let world: NodeWorld | undefined;
let image: BuiltImage;
let local = '';

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('the in-cluster demo runs containerd and a kubelet: run it as root (CI does)');
  local = await mkdtemp(join(tmpdir(), 'metal-l2-demo-in-cluster-'));
  [world, image] = await Promise.all([startNodeWorld('demo'), buildImage(join(local, 'image'))]);
  await mkdir(join(local, 'bin'));
  await symlink(world.tools.kubectl, join(local, 'bin', 'kubectl'));
  await symlink(world.tools.helm, join(local, 'bin', 'helm'));
  await symlink(world.cluster.kubeconfig, join(local, 'kubeconfig'));
  await symlink(world.stateDir, join(local, 'cluster'));
}, 1_500_000);

afterAll(async () => {
  // Stops whatever a failed demo left running; harmless after a clean demo:down.
  if (local !== '') await runDemoScript(local, 'demo-down.js', ['--keep-cluster']).catch(() => undefined);
  if (world !== undefined) await stopControlPlane(world.stateDir);
  if (local !== '') await rm(local, { recursive: true, force: true });
}, 120_000);

describe('npm run demo -- --in-cluster', () => {
  test('every mode Ready with the controllers as pods from the imported image, none on the host; demo:down leaves nothing', async () => {
    const w = need();
    const stdout = await runDemoScript(local, 'demo.js', ['--in-cluster']);
    await expectEveryMachineReady(stdout, join(local, 'kubeconfig'));

    // The controllers ran as the chart's pods, from the image built here.
    const deployments = JSON.parse(await kubectl(w, ['get', 'deployments', '-n', RELEASE_NAMESPACE, '-o', 'json'])) as {
      items: DeploymentView[];
    };
    for (const name of controllerDeployments()) {
      expect(deploymentAvailable(deployments.items.find((d) => d.metadata?.name === name))).toBe(true);
    }
    const pods = JSON.parse(await kubectl(w, ['get', 'pods', '-n', RELEASE_NAMESPACE, '-o', 'json'])) as { items: Pod[] };
    expect(pods.items).toHaveLength(2);
    const imported = await importedImageId(w, `${IMAGE_REPOSITORY}:${image.tag}`);
    for (const pod of pods.items) {
      expect(pod.spec.nodeName).toBe(w.cluster.node.name);
      expect(pod.spec.containers[0]?.image).toBe(`${IMAGE_REPOSITORY}:${image.tag}`);
      expect(pod.status.containerStatuses?.[0]?.imageID).toBe(imported);
      expect(pod.status.containerStatuses?.[0]?.ready).toBe(true);
    }
    // Their processes are the containers' (the image's /app, in the node's cgroups), not this host's.
    const containers = await containerProcesses(w);
    expect(containers.map((c) => c.script).sort()).toEqual([...CONTROLLER_SCRIPTS].sort());
    for (const c of containers) expect(c.cgroup).toContain(`/${nodeLayout(w.stateDir).cgroupRoot}/`);

    // On the host the demo started the simulator and the fixture only; of the processes that use
    // the demo's kubeconfig (the fixture does, so this finds one), none is a controller.
    const state = await readDemoState(local);
    expect(state.mode).toBe('in-cluster');
    expect((state.processes ?? []).map((p) => p.name)).toEqual(['metal-sim', 'capp-fixture']);
    const hostPids = (state.processes ?? []).map((p) => p.pid);
    expect(hostPids.every(alive)).toBe(true);
    const usingKubeconfig = await hostProcessesWith(join(local, 'kubeconfig'));
    expect(usingKubeconfig.map((p) => p.pid)).toEqual([state.processes?.find((p) => p.name === 'capp-fixture')?.pid]);
    expect(usingKubeconfig.some((p) => /-controller\/dist\/main\.js/.test(p.cmdline))).toBe(false);

    // demo:down as a user runs it: the release, the host processes, then the node.
    const layout = nodeLayout(w.stateDir);
    const nodePids = w.cluster.processes.map((p) => p.pid);
    const down = await runDemoScript(local, 'demo-down.js');
    expect(down).toMatch(/^helm uninstall metal-l2: /m);
    // cluster:down looks for leftovers (nodeLeftovers) before the node lock goes and fails when it
    // finds any: afterwards another suite's node may hold the same bridge and chain names. What is
    // this node's alone is checked here too: its processes, its mounts, its directory.
    expect(down).toMatch(
      /^node metal-l2-node torn down: no container, mount, cgroup, bridge, iptables chain or CNI cache entry of it left$/m,
    );
    world = undefined;
    expect(hostPids.filter(alive)).toEqual([]);
    expect(containers.map((c) => c.pid).filter(alive)).toEqual([]);
    expect(nodePids.filter(alive)).toEqual([]);
    expect(await mountsUnder(layout.dir)).toEqual([]);
    expect(existsSync(w.stateDir)).toBe(false);
  }, 400_000);
});

interface Pod {
  spec: { nodeName?: string; containers: { image?: string }[] };
  status: { containerStatuses?: { imageID?: string; ready?: boolean }[] };
}

function need(): NodeWorld {
  if (world === undefined) throw new Error('the node did not start');
  return world;
}

/**
 * The image's id as the node's containerd holds it under `reference`: its manifest's config
 * digest, what the CRI reports as a container's imageID.
 */
async function importedImageId(w: NodeWorld, reference: string): Promise<string> {
  const ctr = async (...args: string[]): Promise<string> =>
    (await run('ctr', ['--address', w.cluster.node.containerdSocket, '-n', 'k8s.io', ...args])).stdout;
  const images = await ctr('images', 'ls');
  const manifest = images
    .split('\n')
    .find((l) => l.startsWith(`${reference} `))
    ?.split(/\s+/)[2];
  if (manifest === undefined) throw new Error(`${reference} not in the node's containerd:\n${images}`);
  return (JSON.parse(await ctr('content', 'get', manifest)) as { config: { digest: string } }).config.digest;
}

/** Each running container's host pid, the script node runs in it, and its cgroup. */
async function containerProcesses(w: NodeWorld): Promise<{ pid: number; script: string; cgroup: string }[]> {
  const { stdout } = await run('ctr', ['--address', w.cluster.node.containerdSocket, '-n', 'k8s.io', 'tasks', 'ls']);
  const found: { pid: number; script: string; cgroup: string }[] = [];
  for (const line of stdout.split('\n').slice(1)) {
    const [, pidText, status] = line.trim().split(/\s+/);
    const pid = Number(pidText);
    if (status !== 'RUNNING' || !Number.isInteger(pid) || pid <= 0) continue;
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    if (!/(^|\/)node$/.test(argv[0] ?? '')) continue; // the pods' sandboxes (busybox sleep)
    found.push({ pid, script: argv[1] ?? '', cgroup: await readFile(`/proc/${pid}/cgroup`, 'utf8') });
  }
  return found;
}

/** This host's processes with `path` among their arguments. */
async function hostProcessesWith(path: string): Promise<{ pid: number; cmdline: string }[]> {
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = (await readFile(join('/proc', entry, 'cmdline'), 'utf8').catch(() => '')).split('\0');
    if (argv.includes(path)) found.push({ pid: Number(entry), cmdline: argv.join(' ') });
  }
  return found;
}
