import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { readInjectionHash } from '@metal-l2/machine-config';
import { testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { ControllerProcess, freePort } from '@metal-l2/test-support/controller-process';
import type { Obj } from '@metal-l2/test-support/objects';
import { oldReleaseMain } from '@metal-l2/test-support/old-release';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
import {
  CONTROLLER_AGENT,
  CREDENTIALS_SECRET,
  condition,
  createMachine,
  createPool,
  createTemplate,
  createVlans,
  netKinds,
  onFirstUse,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
} from './support/network-world.js';
import { eventsOf } from './support/network-probes.js';
import { bootstrapSecret, injectedText, linkClusterToVip } from './support/vip-cluster.js';
import { conditionFlips, watchNamespaceFromNow, type CollectionWatch } from './support/watch-versions.js';

// Upgrading metal-l2 over a running fleet (issue 29): the previous release's network controller
// (built from its commit, as operators would have run it) injects and configures a control plane
// that announces its Cluster's VIP, another control plane, and a worker, all Ready. It stops and
// this release starts with another --metadata-url, so every machine's injected bytes differ from
// what it renders now. What the OS was given has not changed: every machine stays Ready the whole
// time, says InjectedByOlderRelease, and the new controller writes nothing to Metal and no Secret.

/** The last release before injection records (main at a1a0fec). */
const PREVIOUS_RELEASE = 'a1a0fec';
const VIP = '192.168.10.250';
const MACHINES = ['cp-0', 'cp-1', 'wk-0'] as const;
const CONTROL_PLANES = new Set(['cp-0', 'cp-1']);
const ANNOUNCED = { address: VIP, prefix: 24, port: 6443, vxlan: 1000, virtualRouterID: 77 };

const world = useNetworkWorld('net-upgrade', { startNetworkController: false });

let previousMain = '';
beforeAll(async () => {
  previousMain = await oldReleaseMain(PREVIOUS_RELEASE, 'network-controller');
}, 300_000);

const watches: CollectionWatch[] = [];
let previous: ControllerProcess | undefined;
afterAll(async () => {
  for (const w of watches) w.stop();
  await previous?.kill();
});

/** The previous release, run as operators ran it, serving our webhooks. */
async function startPreviousRelease(metadataUrl: string): Promise<ControllerProcess> {
  const webhookPort = await freePort();
  const started = ControllerProcess.start({
    kubeconfig: testKubeconfigPath(),
    namespace: world.ns,
    main: previousMain,
    probePort: await freePort(),
    webhook: { port: webhookPort, certDir: world.webhookCertDir },
    args: [
      '--metal-api-url',
      world.sim.baseUrl,
      '--metal-rate-limit',
      'off',
      '--metal-credentials-secret',
      `${world.ns}/${CREDENTIALS_SECRET}`,
      '--metadata-url',
      metadataUrl,
    ],
  });
  previous = started;
  await started.ready();
  await world.routeWebhooksTo(webhookPort);
  return started;
}

/** A machine's bootstrap data as CAPP gave it to the device, and the metadata URL its boot config reads. */
async function bootstrapData(name: string): Promise<{ value: string; metadataUrl: string; resourceVersion: string }> {
  const secret = await bootstrapSecret(world, name);
  const lines = secret.value.split('\n');
  const at = lines.indexOf('- path: /opt/metal-l2/netcfg.json');
  const content = lines.slice(at + 1, at + 5).find((l) => l.startsWith('  content: ')) ?? '';
  const bootConfig = JSON.parse(Buffer.from(content.slice('  content: '.length), 'base64').toString('utf8')) as { metadataUrl: string };
  return { ...secret, metadataUrl: bootConfig.metadataUrl };
}

/** A watch of this namespace's MachineNetworks or Secrets from now, stopped after all. */
async function watchFromNow(kind: 'machinenetworks' | 'secrets'): Promise<CollectionWatch> {
  const watch = await watchNamespaceFromNow(world.kc, kind === 'secrets' ? 'secrets' : netKinds.machineNetwork, world.ns);
  watches.push(watch);
  return watch;
}

/** Every version of a MachineNetwork, since the upgrade began, that was not Ready=True with UserDataInjected=True (all were before). */
function flips(watch: CollectionWatch): string[] {
  return conditionFlips(watch, ['Ready', 'UserDataInjected'], { settled: MACHINES });
}

/** What the upgrade left for the tests to look at. */
interface Upgraded {
  /** Every version of every MachineNetwork and Secret since the previous release stopped. */
  readonly machineNetworks: CollectionWatch;
  readonly secrets: CollectionWatch;
  /** The simulator's request log when the previous release stopped. */
  readonly mark: number;
  /** Each machine's bootstrap data as the previous release left it. */
  readonly bootstrap: ReadonlyMap<string, Awaited<ReturnType<typeof bootstrapData>>>;
}

let upgraded: Upgraded | undefined;

/**
 * The fleet: the previous release brings up the machines (checked: it recorded only the bytes'
 * hash), then stops; this release starts with another --metadata-url. Made by the first test that
 * asks, so each can run alone.
 */
const upgradeFleet = onFirstUse(async () => {
  const oldMetadataUrl = `${world.sim.url}/metadata`;
  const previousRelease = await startPreviousRelease(oldMetadataUrl);
  await createVlans(world, [1000]);
  await createPool(world, 'vlan-1000', 10);
  await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }]);
  await linkClusterToVip(world, { vip: VIP, virtualRouterID: 77 });
  for (const name of MACHINES) await createMachine(world, name, 'hb', { controlPlane: CONTROL_PLANES.has(name) });
  const bootstrap = new Map<string, Awaited<ReturnType<typeof bootstrapData>>>();
  for (const name of MACHINES) {
    const mn = await waitMachineNetworkReady(world, name, 90_000);
    const data = await bootstrapData(name);
    bootstrap.set(name, data);
    // What the previous release recorded: the bytes' hash only, the one the bootstrap data's marker carries.
    expect(mn.status?.userData).toEqual({ secretName: `${name}-bootstrap`, hash: readInjectionHash(data.value) });
    expect(data.metadataUrl).toBe(oldMetadataUrl);
    // The control planes announce the VIP (keepalived in their user data); the worker does not.
    expect((await injectedText(world, name)).includes(`${VIP}/24`)).toBe(CONTROL_PLANES.has(name));
  }
  // The previous release assigned the VLANs: its writes are seen, so a write of the next one would be.
  expect(world.sim.requests.entries({ userAgent: CONTROLLER_AGENT }).filter((e) => e.method !== 'GET').length).toBeGreaterThan(0);

  // From here on every version of every MachineNetwork and Secret is seen.
  const machineNetworks = await watchFromNow('machinenetworks');
  const secrets = await watchFromNow('secrets');
  await previousRelease.kill();
  const mark = world.sim.requests.lastSeq();
  // This release, with another --metadata-url: every machine's bytes differ from what it renders now.
  expect(NEW_METADATA_URL).not.toBe(oldMetadataUrl);
  await world.restartNetworkController({ metadataUrl: NEW_METADATA_URL });
  upgraded = { machineNetworks, secrets, mark, bootstrap };
});

const NEW_METADATA_URL = 'https://metadata.platformequinix.com/metadata';

async function upgradedFleet(): Promise<Upgraded> {
  await upgradeFleet();
  if (upgraded === undefined) throw new Error('the upgrade did not finish (see the test that ran it)');
  return upgraded;
}

/** Waits until this release has checked a machine: a fingerprint recorded and InjectedByOlderRelease said. */
async function checkedByThisRelease(name: string): Promise<Obj> {
  return waitFor(
    `MachineNetwork ${name} checked by this release`,
    async () => {
      const mn = await world.objects.get(netKinds.machineNetwork, name, world.ns);
      if (mn?.status?.userData?.fingerprint !== undefined && condition(mn, 'UserDataInjected')?.reason === 'InjectedByOlderRelease')
        return mn;
      throw new Error(JSON.stringify(mn?.status ?? 'no MachineNetwork'));
    },
    { timeoutMs: 30_000 },
  );
}

/** Metal writes this release made since `mark`, and Secret events since the watch's `from`th. */
function writesSince(u: Upgraded, from: { readonly seq: number; readonly secretEvents: number }): string[] {
  return [
    ...world.sim.requests
      .entries({ afterSeq: from.seq, userAgent: CONTROLLER_AGENT })
      .flatMap((e) => (e.method === 'GET' ? [] : [`${e.method} ${e.path}`])),
    ...u.secrets
      .events()
      .slice(from.secretEvents)
      .map((e) => `${e.phase} Secret ${e.object.metadata.name}`),
  ];
}

describe('upgrade from the previous release', () => {
  test(
    'the previous release’s machines (two control planes announcing the VIP, a worker) stay Ready through the upgrade to a release that renders other bytes: InjectedByOlderRelease, no Metal write, no Secret write',
    async () => {
      const u = await upgradedFleet();
      for (const name of MACHINES) {
        const mn = await checkedByThisRelease(name);
        const hash = readInjectionHash(u.bootstrap.get(name)?.value ?? '') ?? '';
        expect(mn.status?.userData).toMatchObject({
          secretName: `${name}-bootstrap`,
          hash,
          fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        });
        // Injected by a release that recorded no renderer version: none is made up for it.
        expect(mn.status?.userData?.rendererVersion).toBeUndefined();
        expect(mn.status?.userData?.announcedEndpoint).toEqual(CONTROL_PLANES.has(name) ? ANNOUNCED : undefined);
        const injected = condition(mn, 'UserDataInjected');
        expect(injected?.status).toBe('True');
        // The bytes really differ: the message names both hashes.
        const renders = /this release renders sha256:([0-9a-f]{12})/.exec(injected?.message ?? '')?.[1];
        expect(renders).toBeDefined();
        expect(hash.startsWith(renders ?? '')).toBe(false);
        expect(injected?.message).toContain('nothing needs doing');
        expect(condition(mn, 'Ready')).toMatchObject({ status: 'True', reason: 'Ready' });
      }
      expect(flips(u.machineNetworks)).toEqual([]);
      const from = { seq: u.mark, secretEvents: 0 };
      expect(writesSince(u, from)).toEqual([]);
      // A while more after it reconciled every machine: still nothing.
      await staysTrue(
        'no Ready flip, no Metal write and no Secret write after the upgrade',
        () => flips(u.machineNetworks).length === 0 && writesSince(u, from).length === 0,
        timeouts.nothingHappens,
      );
      expect(u.machineNetworks.events().length).toBeGreaterThanOrEqual(MACHINES.length); // the watch saw the records filled in
      for (const name of MACHINES) expect((await bootstrapData(name)).resourceVersion).toBe(u.bootstrap.get(name)?.resourceVersion);
      // No Warning per machine (nor any other Event about its injection).
      for (const name of MACHINES) expect(eventsOf(world, name).filter((e) => e.type === 'Warning')).toEqual([]);
      const reads = world.sim.requests.entries({ afterSeq: u.mark, userAgent: CONTROLLER_AGENT }).length;
      process.stderr.write(
        `after the upgrade: ${reads} Metal reads, 0 writes, ${u.machineNetworks.events().length} MachineNetwork versions, no Ready flip\n`,
      );
    },
    testTimeout(300_000),
  );

  test(
    'after the upgrade, MachineNetworks restored without status (as a restore or clusterctl move leaves them) come back InjectedByOlderRelease from their annotation, the announced endpoint with it: no Warning, no Metal write, no Secret write',
    async () => {
      const u = await upgradedFleet();
      const restored = ['cp-0', 'wk-0'];
      const records = new Map<string, unknown>();
      for (const name of restored) {
        const mn = await checkedByThisRelease(name);
        records.set(name, mn.status?.userData);
        await waitFor(
          `the record of ${name} kept in its metadata`,
          async () =>
            (await world.objects.get(netKinds.machineNetwork, name, world.ns))?.metadata.annotations?.[
              'network.metal.x-k8s.io/injected-config'
            ],
          { timeoutMs: 10_000 },
        );
      }
      const from = { seq: world.sim.requests.lastSeq(), secretEvents: u.secrets.events().length };
      const versionsFrom = u.machineNetworks.events().length;
      const api = world.kc.makeApiClient(k8s.CustomObjectsApi);
      for (const name of restored) {
        await api.patchNamespacedCustomObjectStatus(
          {
            group: netKinds.machineNetwork.group,
            version: netKinds.machineNetwork.version,
            plural: netKinds.machineNetwork.plural,
            namespace: world.ns,
            name,
            body: { status: null },
          },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        );
      }
      for (const name of restored) {
        const mn = await waitMachineNetworkReady(world, name);
        expect(mn.status?.userData).toEqual(records.get(name));
        expect(condition(mn, 'UserDataInjected')).toMatchObject({ status: 'True', reason: 'InjectedByOlderRelease' });
      }
      // The emptied versions are the restore; after them no version says anything but True.
      const said = u.machineNetworks
        .events()
        .slice(versionsFrom)
        .filter(({ object }) => restored.includes(object.metadata.name))
        .flatMap(({ object }) =>
          ['Ready', 'UserDataInjected'].flatMap((type) => {
            const c = condition(object, type);
            return c === undefined || c.status === 'True' ? [] : [`${object.metadata.name} ${type}=${c.status} ${c.reason ?? ''}`];
          }),
        );
      expect(said).toEqual([]);
      expect(writesSince(u, from)).toEqual([]);
      for (const name of restored) expect(eventsOf(world, name).filter((e) => e.type === 'Warning')).toEqual([]);
    },
    testTimeout(300_000),
  );
});
