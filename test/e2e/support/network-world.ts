import { afterAll, beforeAll } from '@jest/globals';
import { Writable } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { cabpkCloudConfig, reserveClusterEndpoint, startCappFixture, type RunningCappFixture } from '@metal-l2/capp-fixture';
import { startIpamController, type RunningIpamController } from '@metal-l2/ipam-controller';
import { createLogger, type Logger } from '@metal-l2/kube';
import { createMetalClient, type MetalApiObserver, type MetalClient } from '@metal-l2/metal-api';
import { startSimulator, type FaultRuleInput, type SimDelays, type SimRateLimit, type Simulator } from '@metal-l2/metal-sim';
import { startNetworkController, type NetworkTimings, type RunningNetworkController } from '@metal-l2/network-controller';
import { makeServingCertificate } from '@metal-l2/test-support/certificates';
import { expectNoContractViolations, loadContract } from '@metal-l2/test-support/contract';
import { createTestNamespace, deleteTestNamespace, loadKubeConfig } from '@metal-l2/test-support/cluster';
import { installCrds, projectCrds, upstreamCrds } from '@metal-l2/test-support/crds';
import { Objects, type Kind, type Obj } from '@metal-l2/test-support/objects';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';

// The whole system for one test file: the shared real control plane (CAPI v1.14 and CAPP CRDs,
// ours), a Metal simulator checked against the OpenAPI spec (the file fails on any violation), both controllers in this process,
// our PacketMachine webhook registered with the API server for this namespace only, and the CAPP
// fixture creating devices. Builders make the objects a Cluster API user (or CAPI itself) makes.

export const PROJECT_ID = '0f6c3e2a-7b1d-4c5e-9a8b-1d2e3f4a5b6c';
/** Distinctive, so finding it in logs, events or conditions is a real leak. */
export const TOKEN = 'metal-tok-4b7e1f9a2c-never-log-me';
/**
 * CAPP's own API token (its cluster's credentials), not the network controller's: a rate limit
 * is per token, and a production install gives our chart its own Secret.
 */
export const CAPP_TOKEN = 'metal-tok-capp-5d1c7e0b3a';
export const METRO = 'da';
export const CLUSTER = 'wl';
export const CREDENTIALS_SECRET = 'metal-credentials';
/** A 4-port plan (bond0 = eth0+eth2, bond1 = eth1+eth3); createMachine's machineType picks it. */
export const FOUR_PORT_PLAN = 'n3.xlarge.x86';
/** The network controller's User-Agent prefix in the simulator's request log. */
export const CONTROLLER_AGENT = 'metal-l2-network-controller';

export const netKinds = {
  packetMachine: {
    group: 'infrastructure.cluster.x-k8s.io',
    version: 'v1beta1',
    plural: 'packetmachines',
    kind: 'PacketMachine',
    namespaced: true,
  } as Kind,
  packetCluster: {
    group: 'infrastructure.cluster.x-k8s.io',
    version: 'v1beta1',
    plural: 'packetclusters',
    kind: 'PacketCluster',
    namespaced: true,
  } as Kind,
  machine: { group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'machines', kind: 'Machine', namespaced: true } as Kind,
  cluster: { group: 'cluster.x-k8s.io', version: 'v1beta2', plural: 'clusters', kind: 'Cluster', namespaced: true } as Kind,
  endpointTemplate: {
    group: 'network.metal.x-k8s.io',
    version: 'v1alpha1',
    plural: 'clusterendpointtemplates',
    kind: 'ClusterEndpointTemplate',
    namespaced: true,
  } as Kind,
  clusterEndpoint: {
    group: 'network.metal.x-k8s.io',
    version: 'v1alpha1',
    plural: 'clusterendpoints',
    kind: 'ClusterEndpoint',
    namespaced: true,
  } as Kind,
  template: {
    group: 'network.metal.x-k8s.io',
    version: 'v1alpha1',
    plural: 'machinenetworktemplates',
    kind: 'MachineNetworkTemplate',
    namespaced: true,
  } as Kind,
  machineNetwork: {
    group: 'network.metal.x-k8s.io',
    version: 'v1alpha1',
    plural: 'machinenetworks',
    kind: 'MachineNetwork',
    namespaced: true,
  } as Kind,
  pool: {
    group: 'ipam.metal.x-k8s.io',
    version: 'v1alpha1',
    plural: 'inclusterippools',
    kind: 'InClusterIPPool',
    namespaced: true,
  } as Kind,
  claim: {
    group: 'ipam.cluster.x-k8s.io',
    version: 'v1beta2',
    plural: 'ipaddressclaims',
    kind: 'IPAddressClaim',
    namespaced: true,
  } as Kind,
  packetMachineTemplate: {
    group: 'infrastructure.cluster.x-k8s.io',
    version: 'v1beta1',
    plural: 'packetmachinetemplates',
    kind: 'PacketMachineTemplate',
    namespaced: true,
  } as Kind,
  address: {
    group: 'ipam.cluster.x-k8s.io',
    version: 'v1beta2',
    plural: 'ipaddresses',
    kind: 'IPAddress',
    namespaced: true,
  } as Kind,
} as const;

/** Short simulator delays: the flow, not the clock, is under test. */
export const FAST_DELAYS: Partial<SimDelays> = {
  deviceQueuedMs: 100,
  deviceProvisioningMs: 300,
  deviceDeprovisioningMs: 500,
  batchQueuedMs: 50,
  batchInProgressMs: 150,
};
export const FAST_TIMINGS: Partial<NetworkTimings> = { batchPollMs: 300, devicePollMs: 300, metalRetryMs: 300, wakeIntervalMs: 1_000 };

export interface NetworkWorld {
  readonly kc: k8s.KubeConfig;
  readonly objects: Objects;
  readonly ns: string;
  readonly sim: Simulator;
  /** The test's own Metal client (VLANs by hand, device reads). */
  readonly metal: MetalClient;
  /** Every line the network controller logged, for searching (the token must never appear). */
  readonly logLines: string[];
  /** Every line the CAPP fixture logged (its retries, e.g. a refused elastic-IP assignment). */
  readonly cappLogLines: string[];
  network(): RunningNetworkController;
  /**
   * Stops the network controller (if one runs in this process) and starts a new one (a restart, a
   * crash and a new pod, or an upgrade to this release), with other flags if asked.
   */
  restartNetworkController(options?: NetworkControllerFlags): Promise<void>;
  stopNetworkController(): Promise<void>;
  /** Stops the IPAM provider (a provider down or slow for a while); startIpamController starts a new one. */
  stopIpamController(): Promise<void>;
  startIpamController(): Promise<void>;
  /** The webhooks' serving certificate (tls.crt, tls.key), for a network controller run as a process. */
  readonly webhookCertDir: string;
  /** Points the API server's calls to our webhooks at `port` on 127.0.0.1 (a controller run as a process). */
  routeWebhooksTo(port: number): Promise<void>;
}

/** Flags a restarted network controller takes instead of the world's. */
export interface NetworkControllerFlags {
  readonly metadataUrl?: string;
  readonly announcerImage?: string;
}

export interface NetworkWorldOptions {
  readonly faults?: readonly FaultRuleInput[];
  readonly delays?: Partial<SimDelays>;
  readonly timings?: Partial<NetworkTimings>;
  readonly concurrency?: number;
  /** The controller's --metadata-url; default the simulator's own metadata service. */
  readonly metadataUrl?: string;
  /** The controller's --announcer-image (Ignition control planes' keepalived); none when absent. */
  readonly announcerImage?: string;
  /** The simulator's rate limit (a token bucket per API token); none when absent. */
  readonly rateLimit?: SimRateLimit;
  /** Sees the network controller's Metal calls (e.g. createPrometheusObserver on a test registry). */
  readonly metalObserver?: MetalApiObserver;
  /** The CAPP fixture's requeue after a failed elastic-IP assignment (CAPP's 20 s by default). */
  readonly cappVipRetryMs?: number;
  /**
   * False: no network controller runs in this process at first (an upgrade test runs an earlier
   * release as a process, routeWebhooksTo it, then restartNetworkController). Default true.
   */
  readonly startNetworkController?: boolean;
}

/** A debug logger whose every line lands in `lines` (tests read the controllers' log). */
export function linesLogger(lines: string[]): Logger {
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback): void {
      lines.push(String(chunk));
      callback();
    },
  });
  return createLogger({ level: 'debug', stream });
}

function quietLogger(): Logger {
  return createLogger({ level: process.env['METAL_L2_TEST_LOG'] ?? 'error', silent: process.env['METAL_L2_TEST_LOG'] === undefined });
}

/** Sets up the world for the calling test file (beforeAll/afterAll at the top level). */
export function useNetworkWorld(prefix: string, options: NetworkWorldOptions = {}): NetworkWorld {
  const kc = loadKubeConfig();
  const objects = new Objects(kc);
  const admission = kc.makeApiClient(k8s.AdmissionregistrationV1Api);
  const logLines: string[] = [];
  const cappLogLines: string[] = [];
  let ns = '';
  let sim: Simulator | undefined;
  let ipam: RunningIpamController | undefined;
  let network: RunningNetworkController | undefined;
  let fixture: { stop(): Promise<void> } | undefined;
  let certs: { certDir: string; caBundle: string } | undefined;
  let webhookName = '';

  const startNetwork = async (flags: NetworkControllerFlags = {}): Promise<RunningNetworkController> => {
    if (sim === undefined || certs === undefined) throw new Error('the world is not set up');
    return startNetworkController({
      kubeConfig: kc,
      namespace: ns,
      logger: linesLogger(logLines),
      concurrency: options.concurrency ?? 8,
      webhook: { port: 0, certDir: certs.certDir, host: '127.0.0.1' },
      metal: {
        baseUrl: sim.baseUrl,
        rateLimit: false,
        retry: { baseDelayMs: 50, maxDelayMs: 1_000 },
        ...(options.metalObserver === undefined ? {} : { observer: options.metalObserver }),
      },
      defaultCredentials: { namespace: ns, name: CREDENTIALS_SECRET },
      metadataUrl: flags.metadataUrl ?? options.metadataUrl ?? `${sim.url}/metadata`,
      announcerImage: flags.announcerImage ?? options.announcerImage,
      timings: { ...FAST_TIMINGS, ...options.timings },
    });
  };

  const startIpam = (): Promise<RunningIpamController> =>
    startIpamController({ kubeConfig: kc, namespace: ns, logger: quietLogger(), leaderElection: false, concurrency: 4 });

  const registerWebhook = async (port: number): Promise<void> => {
    if (certs === undefined) throw new Error('the world is not set up');
    const body: k8s.V1MutatingWebhookConfiguration = {
      metadata: { name: webhookName },
      webhooks: [
        {
          name: `packetmachine.${ns}.network.metal.x-k8s.io`,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
          clientConfig: {
            url: `https://127.0.0.1:${port}/mutate-infrastructure-cluster-x-k8s-io-v1beta1-packetmachine`,
            caBundle: certs.caBundle,
          },
          rules: [
            {
              apiGroups: ['infrastructure.cluster.x-k8s.io'],
              apiVersions: ['v1beta1'],
              operations: ['CREATE'],
              resources: ['packetmachines'],
            },
          ],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
        },
        {
          // As the chart registers it: only Clusters that carry the endpoint-template annotation.
          name: `cluster.${ns}.network.metal.x-k8s.io`,
          admissionReviewVersions: ['v1'],
          sideEffects: 'None',
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
          clientConfig: { url: `https://127.0.0.1:${port}/mutate-cluster-x-k8s-io-cluster`, caBundle: certs.caBundle },
          rules: [{ apiGroups: ['cluster.x-k8s.io'], apiVersions: ['*'], operations: ['CREATE'], resources: ['clusters'] }],
          matchConditions: [
            {
              name: 'endpoint-template',
              expression: "has(object.metadata.annotations) && 'network.metal.x-k8s.io/endpoint-template' in object.metadata.annotations",
            },
          ],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
        },
      ],
    };
    try {
      await admission.createMutatingWebhookConfiguration({ body });
    } catch (err: unknown) {
      if (!(err instanceof k8s.ApiException && err.code === 409)) throw err;
      const current = await admission.readMutatingWebhookConfiguration({ name: webhookName });
      await admission.replaceMutatingWebhookConfiguration({
        name: webhookName,
        body: {
          ...body,
          metadata: {
            ...body.metadata,
            ...(current.metadata?.resourceVersion === undefined ? {} : { resourceVersion: current.metadata.resourceVersion }),
          },
        },
      });
    }
  };

  beforeAll(async () => {
    await installCrds(kc, [...(await upstreamCrds('capiV1_14')), ...(await upstreamCrds('capp')), ...(await projectCrds())]);
    ns = await createTestNamespace(kc, prefix);
    webhookName = `metal-l2-network-test-${ns}`;
    sim = await startSimulator({
      seed: prefix,
      seedConfig: {
        metros: [{ code: METRO }, { code: 'sv' }],
        plans: [
          { slug: 'c3.small.x86', ports: 2 },
          { slug: FOUR_PORT_PLAN, ports: 4 },
        ],
        projects: [{ name: 'capi', id: PROJECT_ID }],
        tokens: [{ token: TOKEN }, { token: CAPP_TOKEN }],
      },
      delays: { ...FAST_DELAYS, ...options.delays },
      ...(options.faults === undefined ? {} : { faults: [...options.faults] }),
      ...(options.rateLimit === undefined ? {} : { rateLimit: options.rateLimit }),
      ...(await loadContract()),
    });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedSecret({ namespace: ns, body: { metadata: { name: CREDENTIALS_SECRET }, stringData: { apiToken: TOKEN } } });
    certs = await makeServingCertificate();
    ipam = await startIpam();
    if (options.startNetworkController !== false) {
      network = await startNetwork();
      await registerWebhook(network.webhookPort);
    }
    fixture = await startCappForWorkloadCluster({
      kc,
      objects,
      namespace: ns,
      sim,
      token: CAPP_TOKEN,
      logLines: cappLogLines,
      ...(options.cappVipRetryMs === undefined ? {} : { vipRetryIntervalMs: options.cappVipRetryMs }),
    });
  }, 120_000);

  afterAll(async () => {
    await admission.deleteMutatingWebhookConfiguration({ name: webhookName }).catch(() => undefined);
    await fixture?.stop();
    await network?.stop();
    await ipam?.stop();
    if (ns !== '') await deleteTestNamespace(kc, ns);
    await sim?.close();
    await sim?.contract?.close();
    // Last, once every caller stopped: any call (ours, the fixture's, the simulator's answers) that
    // broke the Metal spec fails the file.
    if (sim !== undefined) expectNoContractViolations(sim.contract);
  }, 120_000);

  return {
    kc,
    objects,
    logLines,
    cappLogLines,
    get ns() {
      return ns;
    },
    get sim() {
      if (sim === undefined) throw new Error('the world is not set up');
      return sim;
    },
    get metal() {
      if (sim === undefined) throw new Error('the world is not set up');
      return createMetalClient({ token: TOKEN, baseUrl: sim.baseUrl, rateLimit: false, userAgent: 'metal-l2-test' });
    },
    network() {
      if (network === undefined) throw new Error('the network controller is not running');
      return network;
    },
    async stopNetworkController() {
      await network?.stop();
      network = undefined;
    },
    async stopIpamController() {
      await ipam?.stop();
      ipam = undefined;
    },
    async startIpamController() {
      if (ipam !== undefined) throw new Error('the IPAM provider is running already');
      ipam = await startIpam();
    },
    async restartNetworkController(flags = {}) {
      await network?.stop();
      network = await startNetwork(flags);
      await registerWebhook(network.webhookPort);
    },
    get webhookCertDir() {
      if (certs === undefined) throw new Error('the world is not set up');
      return certs.certDir;
    },
    routeWebhooksTo: registerWebhook,
  };
}

/** A file's shared fixtures, made by the first test that asks for them: any test of the file can run alone. */
export function onFirstUse(make: () => Promise<void>): () => Promise<void> {
  let started = false;
  return async () => {
    if (started) return;
    started = true;
    await make();
  };
}

/** VLANs 1000 and 1001, each with a pool: vlan-1000 (192.168.10.0/24) and vlan-1001 (192.168.11.0/24). */
export async function createTwoVlanPools(world: NetworkWorld): Promise<void> {
  await createVlans(world, [1000, 1001]);
  await createPool(world, 'vlan-1000', 10);
  await createPool(world, 'vlan-1001', 11);
}

/** VLANs 1000 and 1001 (1001 left for a test's own template), pool vlan-1000, and template hb: bond0 tagged with VLAN 1000. */
export async function createHybridBondedTemplate(world: NetworkWorld): Promise<void> {
  await createVlans(world, [1000, 1001]);
  await createPool(world, 'vlan-1000', 10);
  await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }]);
}

/** A pool on one VLAN's subnet, e.g. 192.168.<third>.0/24 handing out .10-.200 with .1 as gateway. */
export async function createPool(world: NetworkWorld, name: string, third: number): Promise<void> {
  await world.objects.create(netKinds.pool, {
    metadata: { name, namespace: world.ns },
    spec: { addresses: [`192.168.${third}.10-192.168.${third}.200`], prefix: 24, gateway: `192.168.${third}.1` },
  });
}

export async function createVlans(world: NetworkWorld, vxlans: readonly number[]): Promise<void> {
  for (const vxlan of vxlans) await world.metal.virtualNetworks.create(PROJECT_ID, { vxlan, metro: METRO, description: `vlan ${vxlan}` });
}

/** A MachineNetworkTemplate; `os` (e.g. `{ renderer: 'networkd' }` for Flatcar) is left to its default when absent. */
export async function createTemplate(world: NetworkWorld, name: string, ports: unknown[], os?: { renderer: string }): Promise<void> {
  await world.objects.create(netKinds.template, {
    metadata: { name, namespace: world.ns },
    spec: { ports, ...(os === undefined ? {} : { os }) },
  });
}

export function poolRef(name: string): { apiGroup: string; kind: string; name: string } {
  return { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name };
}

/** What createMachine makes; createPacketMachine and createMachineOfPacketMachine read their parts. */
export interface MachineOptions {
  readonly value?: string;
  readonly format?: string;
  readonly secretName?: string;
  readonly skipSecret?: boolean;
  /** A control-plane Machine (CAPI's control-plane label), as KubeadmControlPlane makes them. */
  readonly controlPlane?: boolean;
  readonly machineType?: string;
  /** A machine of another workload cluster of the namespace than the world's (CLUSTER). */
  readonly cluster?: string;
  /**
   * A clone of this PacketMachineTemplate, as a MachineSet makes one (cloned-from annotations,
   * no link of its own): `template` is then the link the PacketMachineTemplate must carry.
   */
  readonly clonedFrom?: string;
}

/**
 * A machine as Cluster API makes one: the PacketMachine first (our webhook pauses it), then the
 * bootstrap data Secret and the Machine that points at both.
 */
export async function createMachine(world: NetworkWorld, name: string, template: string, options: MachineOptions = {}): Promise<Obj> {
  const created = await createPacketMachine(world, name, template, options);
  await createMachineOfPacketMachine(world, name, options);
  /** The PacketMachine as the API server stored it: after our mutating webhook. */
  return created;
}

/** The PacketMachine alone, as the API server stored it (after our mutating webhook). */
export async function createPacketMachine(world: NetworkWorld, name: string, template: string, options: MachineOptions = {}): Promise<Obj> {
  return world.objects.create(netKinds.packetMachine, {
    metadata: {
      name,
      namespace: world.ns,
      labels: { 'cluster.x-k8s.io/cluster-name': options.cluster ?? CLUSTER },
      annotations:
        options.clonedFrom === undefined
          ? { 'network.metal.x-k8s.io/template': template }
          : {
              'cluster.x-k8s.io/cloned-from-name': options.clonedFrom,
              'cluster.x-k8s.io/cloned-from-groupkind': 'PacketMachineTemplate.infrastructure.cluster.x-k8s.io',
            },
    },
    spec: { machineType: options.machineType ?? 'c3.small.x86', metro: METRO, os: 'ubuntu_22_04', billingCycle: 'hourly' },
  });
}

/** The bootstrap data Secret (unless skipped) and the Machine of PacketMachine `name`. */
export async function createMachineOfPacketMachine(world: NetworkWorld, name: string, options: MachineOptions = {}): Promise<void> {
  const { objects, ns } = world;
  const cluster = options.cluster ?? CLUSTER;
  const secretName = options.secretName ?? `${name}-bootstrap`;
  if (options.skipSecret !== true) {
    const core = world.kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: secretName, labels: { 'cluster.x-k8s.io/cluster-name': cluster } },
        type: 'cluster.x-k8s.io/secret',
        stringData: { value: options.value ?? cabpkCloudConfig(name), format: options.format ?? 'cloud-config' },
      },
    });
  }
  await objects.create(netKinds.machine, {
    metadata: {
      name,
      namespace: ns,
      labels: {
        'cluster.x-k8s.io/cluster-name': cluster,
        ...(options.controlPlane === true ? { 'cluster.x-k8s.io/control-plane': '' } : {}),
      },
    },
    spec: {
      clusterName: cluster,
      version: 'v1.30.4',
      bootstrap: { dataSecretName: secretName },
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'PacketMachine', name },
    },
  });
}

export function condition(obj: Obj | undefined, type: string): { status?: string; reason?: string; message?: string } | undefined {
  return (obj?.status?.conditions as { type: string; status?: string; reason?: string; message?: string }[] | undefined)?.find(
    (c) => c.type === type,
  );
}

export async function machineNetwork(world: NetworkWorld, name: string): Promise<Obj | undefined> {
  return world.objects.get(netKinds.machineNetwork, name, world.ns);
}

export async function waitMachineNetworkReady(world: NetworkWorld, name: string, timeoutMs = 60_000): Promise<Obj> {
  return waitFor(
    `MachineNetwork ${name} Ready`,
    async () => {
      const mn = await machineNetwork(world, name);
      if (condition(mn, 'Ready')?.status === 'True' && mn !== undefined) return mn;
      // The last state seen is what a timeout reports: say where the machine stands.
      throw new Error(mn === undefined ? 'no MachineNetwork' : JSON.stringify(mn.status?.conditions ?? 'no conditions'));
    },
    { timeoutMs, intervalMs: 200 },
  );
}

/** Waits for a MachineNetwork's condition to give this reason; a timeout says the conditions last seen. */
export async function waitMachineNetworkReason(
  world: NetworkWorld,
  name: string,
  wanted: { readonly type: string; readonly reason: string },
  options: { readonly timeoutMs?: number; readonly intervalMs?: number } = {},
): Promise<Obj> {
  return waitFor(
    `MachineNetwork ${name} ${wanted.type} ${wanted.reason}`,
    async () => {
      const mn = await machineNetwork(world, name);
      if (mn !== undefined && condition(mn, wanted.type)?.reason === wanted.reason) return mn;
      throw new Error(mn === undefined ? 'no MachineNetwork' : JSON.stringify(mn.status?.conditions ?? 'no conditions'));
    },
    { timeoutMs: 30_000, ...options },
  );
}

/** The device CAPP created for a PacketMachine (from its providerID). */
export async function deviceIdOfMachine(world: NetworkWorld, name: string): Promise<string> {
  return waitFor(
    `PacketMachine ${name} to get a providerID`,
    async () => {
      const pm = await world.objects.get(netKinds.packetMachine, name, world.ns);
      const id = pm?.spec?.providerID as string | undefined;
      return id === undefined ? false : id.replace('equinixmetal://', '');
    },
    { timeoutMs: timeouts.claimBound },
  );
}

/**
 * Plays the boot script of a device for modes that take layer 3 away (no guest runs here; the
 * data-plane suite runs real ones): once the controller waits for it, post "metadata captured"
 * to the device's user-state URL, as `metal-l2-net apply` does.
 */
export async function playBootScript(world: NetworkWorld, machine: string): Promise<void> {
  await waitFor(
    `MachineNetwork ${machine} to wait for the boot script`,
    async () => condition(await machineNetwork(world, machine), 'PortsConfigured')?.reason === 'WaitingForBootScript',
    { timeoutMs: 60_000, intervalMs: 200 },
  );
  const deviceId = await deviceIdOfMachine(world, machine);
  const res = await fetch(`${world.sim.url}/metadata/${deviceId}/events`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ state: 'running', code: 1001, message: 'metal-l2: metadata captured' }),
  });
  if (res.status !== 204) throw new Error(`posting the user-state event answered ${res.status}: ${await res.text()}`);
}

/**
 * CAPP's side of the world's workload cluster: the CAPP fixture (device poll 300 ms, its log lines
 * into `logLines`) and the cluster it provisions (provisionWorkloadCluster), both with `token`.
 */
export async function startCappForWorkloadCluster(options: {
  readonly kc: k8s.KubeConfig;
  readonly objects: Objects;
  readonly namespace: string;
  readonly sim: Simulator;
  readonly token: string;
  readonly logLines: string[];
  /** CAPP's requeue after a failed elastic-IP assignment; default CAPP's 20 s. */
  readonly vipRetryIntervalMs?: number;
}): Promise<RunningCappFixture> {
  const { kc, objects, namespace, sim, token } = options;
  const fixture = await startCappFixture({
    kubeConfig: kc,
    namespace,
    metal: { baseUrl: sim.baseUrl, token },
    logger: linesLogger(options.logLines),
    pollIntervalMs: 300,
    ...(options.vipRetryIntervalMs === undefined ? {} : { vipRetryIntervalMs: options.vipRetryIntervalMs }),
  });
  await provisionWorkloadCluster({ kc, objects, namespace, metalBaseUrl: sim.baseUrl, token });
  return fixture;
}

/**
 * A VRF-backed InClusterIPPool as a user writes one for the chart tests: `vrfName` created in
 * PROJECT_ID's METRO with 10.60.0.0/16, its addresses from 10.60.1.10, VLAN `vxlan` with a Metal
 * gateway, and Metal credentials from the Secret `credentials`.
 */
export function vrfBackedPool(options: {
  readonly namespace: string;
  readonly vrfName: string;
  readonly vxlan: number;
  readonly credentials: string;
}): Obj {
  return {
    metadata: { name: 'vrf-pool', namespace: options.namespace },
    spec: {
      addresses: ['10.60.1.10-10.60.1.200'],
      prefix: 24,
      vrf: {
        projectID: PROJECT_ID,
        metro: METRO,
        credentialsSecretRef: { name: options.credentials },
        create: { name: options.vrfName, ipRanges: ['10.60.0.0/16'], localASN: 65100 },
        vxlan: options.vxlan,
        metalGateway: true,
      },
    },
  };
}

/**
 * The workload cluster as Cluster API and CAPP would have it before any machine: the PacketCluster,
 * the endpoint reservation CAPP's PacketCluster controller makes for CPEM (the default vipManager;
 * without it CAPP v0.9.0, and so the fixture, fails every active machine), the Cluster, and its
 * infrastructure marked provisioned (no CAPI Cluster controller runs; CAPP waits for it).
 */
export async function provisionWorkloadCluster(options: {
  readonly kc: k8s.KubeConfig;
  readonly objects: Objects;
  readonly namespace: string;
  readonly metalBaseUrl: string;
  readonly token: string;
  /** Another workload cluster of the namespace than the world's (CLUSTER). */
  readonly name?: string;
  /** The Cluster as its user creates it: annotations, and an endpoint of their own. */
  readonly annotations?: Readonly<Record<string, string>>;
  readonly controlPlaneEndpoint?: { readonly host: string; readonly port: number };
}): Promise<void> {
  const { kc, objects, namespace } = options;
  const name = options.name ?? CLUSTER;
  await objects.create(netKinds.packetCluster, {
    metadata: { name, namespace },
    spec: { projectID: PROJECT_ID, metro: METRO },
  });
  await reserveClusterEndpoint(createMetalClient({ token: options.token, baseUrl: options.metalBaseUrl, rateLimit: false }), {
    projectId: PROJECT_ID,
    clusterName: name,
    metro: METRO,
  });
  await objects.create(netKinds.cluster, {
    metadata: { name, namespace, ...(options.annotations === undefined ? {} : { annotations: { ...options.annotations } }) },
    spec: {
      infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'PacketCluster', name },
      ...(options.controlPlaneEndpoint === undefined ? {} : { controlPlaneEndpoint: { ...options.controlPlaneEndpoint } }),
    },
  });
  await kc.makeApiClient(k8s.CustomObjectsApi).patchNamespacedCustomObjectStatus(
    {
      group: netKinds.cluster.group,
      version: netKinds.cluster.version,
      plural: netKinds.cluster.plural,
      namespace,
      name,
      body: { status: { initialization: { infrastructureProvisioned: true } } },
    },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
}
