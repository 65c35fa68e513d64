import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { cabpkCloudConfig, type RunningCappFixture } from '@metal-l2/capp-fixture';
import {
  IMAGE_REPOSITORY,
  controllerDeployments,
  deploymentAvailable,
  importImage,
  installRelease,
  isAlive,
  nodeLayout,
  nodeLeftovers,
  stopControlPlane,
  uninstallRelease,
  type BuiltImage,
  type UserValues,
} from '@metal-l2/local-control-plane';
import { startSimulator, type Simulator } from '@metal-l2/metal-sim';
import {
  CLUSTER,
  condition,
  CREDENTIALS_SECRET as CREDENTIALS,
  METRO,
  netKinds,
  PROJECT_ID,
  startCappForWorkloadCluster,
  vrfBackedPool,
} from '../e2e/support/network-world.js';
import { loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, machineHealthCheckStandIn, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects, type Obj } from '@metal-l2/test-support/objects';
import { repoRoot } from '@metal-l2/test-support/paths';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
import { parseAllDocuments } from 'yaml';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { buildImage, rebuildImage, helm, kubectl, startNodeWorld, type NodeWorld } from '@metal-l2/test-support/node-world';

// The chart the way users install it: `helm install` onto a real node (containerd, runc, the
// bridge CNI, kube-proxy, a kubelet with webhook authentication) with the image `npm run image`
// builds, imported into the node's containerd. Values are only what a user sets: the image, its
// pull policy, the Metal API URL (the simulator on this host, at the bridge address pods reach)
// and the credentials Secret. One node serves the whole file; the last test stops it and checks
// that nothing of it is left on the host.

const chart = join(repoRoot, 'charts', 'metal-l2');
const releaseNs = 'metal-l2-system';
const release = 'metal-l2';
const TOKEN = 'metal-tok-node-3f9a1c7e-never-log-me';
const VXLAN = 1100;
const ns = 'machines';
const deployments = controllerDeployments(release);

let world: NodeWorld | undefined;
let image: BuiltImage;
let rebuilt: BuiltImage;
let imageDir = '';
let kc: k8s.KubeConfig;
let objects: Objects;
let sim: Simulator | undefined;
let fixture: RunningCappFixture | undefined;
const fixtureLines: string[] = [];
const addressesSeen: string[] = [];
const run = promisify(execFile);

function need(): NodeWorld {
  if (world === undefined) throw new Error('the node did not start');
  return world;
}

/** The values a user sets, and nothing else. */
function userValues(s: Simulator, tag: string): UserValues {
  return { imageTag: tag, metalApiUrl: s.baseUrl, metadataUrl: `${s.url}/metadata`, credentialsSecret: CREDENTIALS };
}

async function readDeployment(name: string): Promise<k8s.V1Deployment | undefined> {
  return kc
    .makeApiClient(k8s.AppsV1Api)
    .readNamespacedDeployment({ namespace: releaseNs, name })
    .catch(() => undefined);
}

/** Resolves true once Available; otherwise throws what the Deployment and its pods show (for waitFor's timeout message). */
async function availableOrWhy(name: string): Promise<true> {
  const d = await readDeployment(name);
  if (deploymentAvailable(d)) return true;
  const pods = (await controllerPods()).filter((p) => p.metadata?.name?.startsWith(`${name}-`));
  const podStates = pods.map((p) => ({
    name: p.metadata?.name,
    phase: p.status?.phase,
    deleting: p.metadata?.deletionTimestamp !== undefined,
    ready: p.status?.containerStatuses?.[0]?.ready,
    restarts: p.status?.containerStatuses?.[0]?.restartCount,
    waiting: p.status?.containerStatuses?.[0]?.state?.waiting?.reason,
    unschedulable: p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False')?.message,
  }));
  throw new Error(`${JSON.stringify(d?.status ?? 'no Deployment')} pods ${JSON.stringify(podStates)}`);
}

async function controllerPods(): Promise<k8s.V1Pod[]> {
  return (await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: releaseNs })).items;
}

function restarts(pods: readonly k8s.V1Pod[]): number {
  return pods.flatMap((p) => p.status?.containerStatuses ?? []).reduce((n, c) => n + c.restartCount, 0);
}

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('the node suite runs containerd and a kubelet: run it as root (CI does)');
  imageDir = await mkdtemp(join(repoRoot, '.local', 'node-image-'));
  [image, world] = await Promise.all([buildImage(join(imageDir, 'first')), startNodeWorld()]);
  rebuilt = await rebuildImage(image, join(imageDir, 'rebuilt'), 'rebuilt');

  await importImage(world.cluster.node.containerdSocket, image);
  kc = loadKubeConfig(world.cluster.kubeconfig);
  objects = new Objects(kc);
  await installCrds(kc, [...(await upstreamCrds('capiV1_14')), ...(await upstreamCrds('capp')), machineHealthCheckStandIn()]);
  // On the bridge address: the pods reach it there, and so do this host's programs.
  sim = await startSimulator({
    seed: 'node',
    host: world.cluster.node.hostAddress,
    seedConfig: {
      metros: [{ code: METRO }],
      plans: [{ slug: 'c3.small.x86', ports: 2 }],
      projects: [{ name: 'capi', id: PROJECT_ID }],
      tokens: [{ token: TOKEN }],
    },
    delays: { deviceQueuedMs: 100, deviceProvisioningMs: 300, batchQueuedMs: 50, batchInProgressMs: 150 },
  });
  // The machines' namespace and the pool's credentials; the release namespace and its Secret are
  // what a user makes for `helm install` (installRelease).
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: ns } } });
  await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: CREDENTIALS }, stringData: { apiToken: TOKEN } } });
}, 1_200_000);

afterAll(async () => {
  await fixture?.stop();
  await sim?.close();
  if (world !== undefined) await stopControlPlane(world.stateDir);
  if (imageDir !== '') await rm(imageDir, { recursive: true, force: true });
}, 120_000);

describe('helm install onto a real node', () => {
  test('both Deployments become Available through their own probes, from the imported image', async () => {
    const w = need();
    if (sim === undefined) throw new Error('no simulator');
    const started = Date.now();
    await installRelease(w.tools, { chart, release, namespace: releaseNs, values: userValues(sim, image.tag), token: TOKEN });
    for (const name of deployments) {
      await waitFor(`Deployment ${name} Available`, async () => availableOrWhy(name), {
        timeoutMs: 180_000,
        intervalMs: 250,
      });
    }
    const seconds = (Date.now() - started) / 1000;
    const pods = await controllerPods();
    process.stderr.write(
      `[node] helm install -> both Deployments Available in ${seconds.toFixed(1)} s; image ${(image.compressedBytes / 1e6).toFixed(1)} MB compressed, ` +
        `${(image.uncompressedBytes / 1e6).toFixed(1)} MB unpacked; restarts ${restarts(pods)}\n`,
    );
    expect(pods).toHaveLength(2);
    for (const pod of pods) {
      expect(pod.spec?.nodeName).toBe(w.cluster.node.name);
      expect(pod.spec?.containers[0]?.image).toBe(`${IMAGE_REPOSITORY}:${image.tag}`);
      expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      // The pod's address is on the node's bridge: a real sandbox with its own network namespace.
      expect(pod.status?.podIP).toMatch(/^10\.213\.0\./);
    }
    expect(restarts(pods)).toBe(0);
    // kubectl logs goes API server -> kubelet (client certificate, webhook authorization).
    const logs = await kubectl(w, ['logs', '-n', releaseNs, `deployment/${deployments[0]}`, '--tail=50']);
    expect(logs.split('\n').some((l) => l.startsWith('{') && l.includes('"level"'))).toBe(true);
  }, 300_000);

  test("the webhooks are served through the chart's Services with the chart's certificate", async () => {
    const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
    const validating = await admission.readValidatingWebhookConfiguration({ name: `${release}-ipam` });
    for (const hook of validating.webhooks ?? []) {
      expect(hook.clientConfig.url).toBeUndefined();
      expect(hook.clientConfig.service?.name).toBe(`${release}-ipam-webhook`);
      expect(hook.clientConfig.caBundle ?? '').not.toBe('');
    }
    // Refused by the IPAM webhook (not by the schema), with its own message. The first calls may
    // find no endpoint yet (kube-proxy follows the EndpointSlice a moment after the pod is Ready).
    const refusal = await waitFor(
      'the IPAM webhook to refuse a pool through its Service',
      async () => {
        const err = await objects
          .create(netKinds.pool, {
            metadata: { name: 'refused', namespace: ns },
            spec: { addresses: ['10.80.0.10-10.80.0.20'], prefix: 24, gateway: '10.81.0.1' },
          })
          .then(
            () => new Error('the pool was admitted'),
            (e: unknown) => (e instanceof Error ? e : new Error(String(e))),
          );
        if (/denied the request/.test(err.message)) return err.message;
        throw err;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(refusal).toMatch(
      /admission webhook .{0,8}inclusterippool\.ipam\.metal\.x-k8s\.io.{0,8} denied the request: .*outside the pool's subnet/s,
    );
    // The network controller's webhooks, through their Service: a template is validated (once
    // kube-proxy leads the Service to the pod), then a linked machine is held (a pause annotation).
    await waitFor(
      'the network webhook to admit a template through its Service',
      async () =>
        objects.create(netKinds.template, {
          metadata: { name: 'probe', namespace: ns },
          spec: { ports: [{ name: 'bond0', vlans: [{ vxlan: 2 }] }] },
        }),
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    const held = await objects.create(netKinds.packetMachine, {
      metadata: { name: 'webhook-probe', namespace: ns, annotations: { 'network.metal.x-k8s.io/template': 'probe' } },
      spec: { machineType: 'c3.small.x86', metro: METRO, os: 'ubuntu_22_04', billingCycle: 'hourly' },
    });
    expect(held.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeDefined();
    await objects.delete(netKinds.packetMachine, 'webhook-probe', ns);
    await objects.delete(netKinds.template, 'probe', ns);
  });

  test('the IPAM + network flow runs end to end against the installed pods: machines reach Ready', async () => {
    if (sim === undefined) throw new Error('no simulator');
    fixture = await startCappForWorkloadCluster({ kc, objects, namespace: ns, sim, token: TOKEN, logLines: fixtureLines });
    await objects.create(netKinds.pool, vrfBackedPool({ namespace: ns, vrfName: 'node', vxlan: VXLAN, credentials: CREDENTIALS }));
    await objects.create(netKinds.template, {
      metadata: { name: 'hb', namespace: ns },
      spec: {
        ports: [
          {
            name: 'bond0',
            vlans: [{ vxlan: VXLAN, addressesFromPools: [{ apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'vrf-pool' }] }],
          },
        ],
      },
    });
    const names = ['m-0', 'm-1', 'm-2'];
    for (const name of names) await createMachine(name, 'hb');
    await expectAllReady(names);
  }, 300_000);

  test('/metrics is scraped through the metrics Services', async () => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    for (const name of deployments) {
      const svc = await core.readNamespacedService({ namespace: releaseNs, name: `${name}-metrics` });
      const port = svc.spec?.ports?.find((p) => p.name === 'metrics')?.port ?? svc.spec?.ports?.[0]?.port;
      // The Service's cluster IP from the host: kube-proxy's rules lead to the pod.
      const text = await waitFor(
        `${name} metrics through its Service`,
        async () => {
          const res = await fetch(`http://${svc.spec?.clusterIP ?? ''}:${port ?? 0}/metrics`, { signal: AbortSignal.timeout(3_000) });
          return res.status === 200 ? res.text() : false;
        },
        { timeoutMs: 30_000, intervalMs: 500 },
      );
      expect(text).toMatch(/^controller_runtime_reconcile_total\{/m);
    }
  });

  test('the leader pod force-deleted and a container SIGKILLed mid-rollout: every machine Ready, no duplicate address, each VLAN once', async () => {
    const w = need();
    const leases = kc.makeApiClient(k8s.CoordinationV1Api);
    const names = ['k-0', 'k-1', 'k-2', 'k-3', 'k-4', 'k-5'];
    for (const name of names.slice(0, 3)) await createMachine(name, 'hb');
    // The network controller's leader, by its Lease (identity = pod name + a UUID).
    const holder = (await leases.readNamespacedLease({ namespace: releaseNs, name: `${release}-network` })).spec?.holderIdentity ?? '';
    const leaderPod = (await controllerPods()).find((p) => holder.startsWith(p.metadata?.name ?? '-'));
    expect(leaderPod).toBeDefined();
    await kubectl(w, ['delete', 'pod', '-n', releaseNs, leaderPod?.metadata?.name ?? '', '--force', '--grace-period=0']);
    for (const name of names.slice(3)) await createMachine(name, 'hb');
    // SIGKILL the IPAM container's process, as the OOM killer would: the kubelet restarts it in place.
    const ipamPod = (await controllerPods()).find((p) => p.metadata?.name?.startsWith(`${release}-ipam-`));
    const containerId = (ipamPod?.status?.containerStatuses?.[0]?.containerID ?? '').replace('containerd://', '');
    const pid = await taskPid(w, containerId);
    process.kill(pid, 'SIGKILL');
    await waitFor(
      'the kubelet to restart the IPAM container',
      async () => {
        const pod = (await controllerPods()).find((p) => p.metadata?.name === ipamPod?.metadata?.name);
        const status = pod?.status?.containerStatuses?.[0];
        return status !== undefined && status.restartCount === 1 && status.ready;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    await expectAllReady(['m-0', 'm-1', 'm-2', ...names]);
    for (const name of deployments) {
      await waitFor(`Deployment ${name} Available`, async () => availableOrWhy(name), {
        timeoutMs: 90_000,
        intervalMs: 500,
      });
    }
    const pods = await controllerPods();
    process.stderr.write(
      `[node] kill: ${names.length + 3} machines Ready, ${new Set(addressesSeen).size} distinct addresses; pod restarts now ${restarts(pods)}\n`,
    );
    expect(pods.some((p) => p.metadata?.name === leaderPod?.metadata?.name)).toBe(false);
  }, 300_000);

  test('helm upgrade to a rebuilt image (another digest) mid-rollout loses nothing', async () => {
    const w = need();
    if (sim === undefined) throw new Error('no simulator');
    expect(rebuilt.ociDigest).not.toBe(image.ociDigest);
    const socket = w.cluster.node.containerdSocket;
    const digests = [await importImage(socket, rebuilt), await importImage(socket, image)];
    expect(digests[0]).not.toBe(digests[1]);
    const names = ['u-0', 'u-1', 'u-2', 'u-3'];
    for (const name of names.slice(0, 2)) await createMachine(name, 'hb');
    await helm(w, ['upgrade', release, chart, '-n', releaseNs, '--reuse-values', '--set', 'image.tag=rebuilt']);
    for (const name of names.slice(2)) await createMachine(name, 'hb');
    for (const name of deployments) {
      await waitFor(
        `Deployment ${name} rolled to the rebuilt image`,
        async () => {
          const d = await readDeployment(name);
          const pods = (await controllerPods()).filter((p) => p.metadata?.name?.startsWith(`${name}-`));
          return (
            deploymentAvailable(d) &&
            d?.spec?.template.spec?.containers[0]?.image === `${IMAGE_REPOSITORY}:rebuilt` &&
            pods.length === 1 &&
            pods.every((p) => p.spec?.containers[0]?.image === `${IMAGE_REPOSITORY}:rebuilt`)
          );
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
    }
    await expectAllReady(['m-0', 'm-1', 'm-2', 'k-0', 'k-1', 'k-2', 'k-3', 'k-4', 'k-5', ...names]);
    process.stderr.write(
      `[node] upgrade: ${9 + names.length} machines Ready after the rollout, ${new Set(addressesSeen).size} distinct addresses\n`,
    );
  }, 600_000);

  test('with replicas: 2 the PodDisruptionBudget holds through kubectl drain (eviction API); the webhooks keep answering', async () => {
    const w = need();
    await helm(w, [
      'upgrade',
      release,
      chart,
      '-n',
      releaseNs,
      '--reuse-values',
      '--set',
      'ipam.replicas=2',
      '--set',
      'network.replicas=2',
    ]);
    for (const name of deployments) {
      await waitFor(`Deployment ${name} Available with 2 replicas`, async () => availableOrWhy(name), {
        timeoutMs: 120_000,
        intervalMs: 500,
      });
    }
    const drain = await kubectl(w, ['drain', w.cluster.node.name, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=12s']).then(
      (out) => ({ ok: true, out }),
      (err: unknown) => ({ ok: false, out: `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}` }),
    );
    try {
      // One pod of each went (the budget allows one); the other stays, since its replacement cannot
      // schedule. kubectl asks again every 5 s: refused more than once, the budget held, not a moment.
      expect(drain.ok).toBe(false);
      const refusals = drain.out.match(/Cannot evict pod as it would violate the pod's disruption budget/g) ?? [];
      expect(refusals.length).toBeGreaterThanOrEqual(2);
      const pods = await controllerPods();
      for (const name of deployments) {
        const ready = pods.filter(
          (p) =>
            p.metadata?.name?.startsWith(`${name}-`) &&
            p.metadata.deletionTimestamp === undefined &&
            p.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True',
        );
        expect(ready).toHaveLength(1);
      }
      await createMachine('d-0', 'hb');
      await expectAllReady(['d-0']);
      await expect(
        objects.create(netKinds.pool, {
          metadata: { name: 'refused-while-draining', namespace: ns },
          spec: { addresses: ['10.80.0.10-10.80.0.20'], prefix: 24, gateway: '10.81.0.1' },
        }),
      ).rejects.toThrow(/denied the request/);
    } finally {
      await kubectl(w, ['uncordon', w.cluster.node.name]);
    }
    for (const name of deployments) {
      await waitFor(`Deployment ${name} Available again`, async () => availableOrWhy(name), {
        timeoutMs: 120_000,
        intervalMs: 500,
      });
    }
    process.stderr.write(`[node] drain: refused by the PDB, one pod of each Deployment kept Ready, machine d-0 Ready during the drain\n`);
  }, 400_000);

  test('helm uninstall leaves none of the release objects but the CRDs, and no Metal call after it', async () => {
    const w = need();
    if (sim === undefined) throw new Error('no simulator');
    const manifest = await helm(w, ['get', 'manifest', release, '-n', releaseNs]);
    const refs = parseAllDocuments(manifest)
      .map((d) => d.toJS() as { kind?: string; apiVersion?: string; metadata?: { name?: string; namespace?: string } } | null)
      .filter(
        (d): d is { kind: string; apiVersion: string; metadata: { name: string; namespace?: string } } => typeof d?.kind === 'string',
      );
    expect(refs.length).toBeGreaterThan(10);
    await uninstallRelease(w.tools, { release, namespace: releaseNs });
    await waitFor('the controller pods gone', async () => (await controllerPods()).length === 0, { timeoutMs: 120_000, intervalMs: 500 });
    const left: string[] = [];
    for (const ref of refs) {
      const args = [
        'get',
        `${ref.kind}.${ref.apiVersion.includes('/') ? (ref.apiVersion.split('/')[0] ?? '') : ''}`.replace(/\.$/, ''),
        ref.metadata.name,
      ];
      const found = await kubectl(w, [
        ...args,
        ...(ref.metadata.namespace === undefined ? [] : ['-n', ref.metadata.namespace]),
        '--ignore-not-found',
        '-o',
        'name',
      ]);
      if (found.trim() !== '') left.push(found.trim());
    }
    expect(left).toEqual([]);
    const crds = await kubectl(w, ['get', 'crd', '-o', 'name']);
    expect(crds).toMatch(/inclusterippools\.ipam\.metal\.x-k8s\.io/);
    expect(crds).toMatch(/machinenetworks\.network\.metal\.x-k8s\.io/);
    // Changes the controllers would act on (a new machine, a pool deleted): no controller calls Metal.
    const controllerCalls = (): number => sim?.requests.entries().filter((e) => (e.userAgent ?? '').startsWith('metal-l2')).length ?? 0;
    const before = controllerCalls();
    expect(before).toBeGreaterThan(0);
    await createMachine('after-uninstall', 'hb');
    await objects.delete(netKinds.pool, 'vrf-pool', ns);
    await staysTrue('no Metal call from a controller', () => controllerCalls() === before, 5_000);
  }, 300_000);

  test('stopping the node leaves nothing on the host: processes, mounts, cgroups, links, iptables chains, CNI cache', async () => {
    const w = need();
    const pids = w.cluster.processes.map((p) => p.pid);
    const layout = nodeLayout(w.stateDir);
    // Proves the check can fail: the running node has all of these.
    const before = await nodeLeftovers(layout);
    for (const kind of ['mount', 'cgroup', 'bridge', 'chain']) expect(before.some((l) => l.startsWith(`${kind} `))).toBe(true);
    await fixture?.stop();
    fixture = undefined;
    // Looked for inside the stop, before the node lock goes: a node another suite starts next takes
    // the same bridge and chain names.
    const stopped = await stopControlPlane(w.stateDir);
    world = undefined;
    expect(stopped.node?.leftovers).toEqual([]);
    expect(pids.filter((pid) => isAlive(pid))).toEqual([]);
  }, 120_000);
});

async function createMachine(name: string, template: string): Promise<Obj> {
  // With one replica the PacketMachine webhook fails closed while its pod is replaced; Cluster
  // API's controllers retry the create, and so does this.
  const admitted = await waitFor(
    `PacketMachine ${name} admitted`,
    async () =>
      objects.create(netKinds.packetMachine, {
        metadata: {
          name,
          namespace: ns,
          labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER },
          annotations: { 'network.metal.x-k8s.io/template': template },
        },
        spec: { machineType: 'c3.small.x86', metro: METRO, os: 'ubuntu_22_04', billingCycle: 'hourly' },
      }),
    { timeoutMs: 90_000, intervalMs: 500 },
  );
  await kc.makeApiClient(k8s.CoreV1Api).createNamespacedSecret({
    namespace: ns,
    body: {
      // Bootstrap data of a Machine without a bootstrap config: labelled for the chart's Secret policy.
      metadata: {
        name: `${name}-bootstrap`,
        labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER, 'network.metal.x-k8s.io/bootstrap-data': 'true' },
      },
      type: 'cluster.x-k8s.io/secret',
      stringData: { value: cabpkCloudConfig(name), format: 'cloud-config' },
    },
  });
  await objects.create(netKinds.machine, {
    metadata: { name, namespace: ns, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
    spec: {
      clusterName: CLUSTER,
      version: 'v1.30.4',
      bootstrap: { dataSecretName: `${name}-bootstrap` },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'PacketMachine', name },
    },
  });
  return admitted;
}

/**
 * Every machine's MachineNetwork Ready, every address distinct, and on the simulator one VLAN for
 * the VXLAN, assigned exactly once to each machine's bond0.
 */
async function expectAllReady(names: readonly string[]): Promise<void> {
  const addresses: string[] = [];
  for (const name of names) {
    const mn = await waitFor(
      `MachineNetwork ${name} Ready`,
      async () => {
        const found = await objects.get(netKinds.machineNetwork, name, ns);
        if (condition(found, 'Ready')?.status === 'True') return found;
        throw new Error(
          `${JSON.stringify(found?.status?.conditions ?? 'no MachineNetwork')}\nCAPP fixture: ${fixtureLines.slice(-5).join('')}`,
        );
      },
      { timeoutMs: 120_000, intervalMs: 300 },
    );
    addresses.push(...((mn.status?.addresses as { address: string }[] | undefined) ?? []).map((a) => a.address));
  }
  addressesSeen.push(...addresses);
  expect(addresses).toHaveLength(names.length);
  expect(new Set(addresses).size).toBe(addresses.length);
  if (sim === undefined) throw new Error('no simulator');
  const vlans = [...sim.store.vlans.values()].filter((v) => v.vxlan === VXLAN && v.metroCode === METRO);
  expect(vlans).toHaveLength(1);
  const vlanId = vlans[0]?.id;
  for (const name of names) {
    const pm = await objects.get(netKinds.packetMachine, name, ns);
    const deviceId = String(pm?.spec?.providerID ?? '').replace('equinixmetal://', '');
    const bond = [...sim.store.ports.values()].find((p) => p.deviceId === deviceId && p.name === 'bond0');
    expect(bond?.vlans.filter((a) => a.vlanId === vlanId)).toHaveLength(1);
  }
}

/** The host pid of a container's task, from the node's containerd. */
async function taskPid(w: NodeWorld, containerId: string): Promise<number> {
  const { stdout } = await run('ctr', ['--address', w.cluster.node.containerdSocket, '-n', 'k8s.io', 'tasks', 'ls']);
  const line = stdout.split('\n').find((l) => l.startsWith(containerId));
  const pid = Number(line?.split(/\s+/)[1]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no task for container ${containerId}: ${stdout}`);
  return pid;
}
