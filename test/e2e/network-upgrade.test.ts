import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { RENDERER_VERSION, readInjectionHash } from '@metal-l2/machine-config';
import { testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { ControllerProcess, freePort } from '@metal-l2/test-support/controller-process';
import type { Obj } from '@metal-l2/test-support/objects';
import { oldReleaseMain } from '@metal-l2/test-support/old-release';
import { testTimeout, timeouts } from '@metal-l2/test-support/timeouts';
import { staysTrue, waitFor } from '@metal-l2/test-support/wait-for';
import { CABPK_IGNITION_JOIN } from '../../packages/machine-config/test/fixtures/ignition.js';
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

// Upgrading metal-l2 over a running fleet (issues 29 and 31), through the releases operators ran,
// each built from its commit: the release before injection records (a1a0fec) injects and configures
// a control plane that announces its Cluster's VIP, another control plane and a worker. The previous
// release (1f1ad9c, the first with records and Ignition) takes them over, then adds a worker and a
// Flatcar machine (CABPK's Ignition) of its own, all Ready. It stops and this release starts. This
// release's boot script is another (no python3: RENDERER_VERSION 2), so every machine's injected
// bytes differ from what it renders now. What the OS was given has not changed: every machine stays
// Ready the whole time, says InjectedByOlderRelease, and the new controller writes nothing to Metal
// and no Secret.

/** The last release before injection records (main at a1a0fec). */
const RELEASE_BEFORE_RECORDS = 'a1a0fec';
/** The previous release: records with renderer version 1, Ignition served (main at 1f1ad9c). */
const PREVIOUS_RELEASE = '1f1ad9c';
const PREVIOUS_RENDERER_VERSION = 1;
const VIP = '192.168.10.250';
/** Injected by the release before records. */
const OLDEST = ['cp-0', 'cp-1', 'wk-0'] as const;
/** Injected by the previous release: a cloud-config worker and a Flatcar (Ignition) one. */
const PREVIOUS = ['wk-1', 'fc-0'] as const;
const MACHINES = [...OLDEST, ...PREVIOUS] as const;
const IGNITION = new Set<string>(['fc-0']);
const CONTROL_PLANES = new Set(['cp-0', 'cp-1']);
const ANNOUNCED = { address: VIP, prefix: 24, port: 6443, vxlan: 1000, virtualRouterID: 77 };

const world = useNetworkWorld('net-upgrade', { startNetworkController: false });

const mains = new Map<string, string>();
beforeAll(async () => {
  for (const release of [RELEASE_BEFORE_RECORDS, PREVIOUS_RELEASE]) mains.set(release, await oldReleaseMain(release, 'network-controller'));
}, 300_000);

const watches: CollectionWatch[] = [];
let previous: ControllerProcess | undefined;
afterAll(async () => {
  for (const w of watches) w.stop();
  await previous?.kill();
});

/** An earlier release, run as operators ran it, serving our webhooks. */
async function startRelease(release: string, metadataUrl: string): Promise<ControllerProcess> {
  const webhookPort = await freePort();
  const started = ControllerProcess.start({
    kubeconfig: testKubeconfigPath(),
    namespace: world.ns,
    main: mains.get(release) ?? '',
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
  return { ...secret, metadataUrl: bootConfigOf(name, secret.value).metadataUrl };
}

/** The boot script's configuration (netcfg.json) in cloud-config or Ignition bootstrap data. */
function bootConfigOf(name: string, value: string): { metadataUrl: string } {
  let encoded: string | undefined;
  if (IGNITION.has(name)) {
    const config = JSON.parse(value) as { storage: { files: { path: string; contents: { source: string } }[] } };
    encoded = config.storage.files.find((f) => f.path === '/opt/metal-l2/netcfg.json')?.contents.source.replace(/^data:;base64,/, '');
  } else {
    const lines = value.split('\n');
    const at = lines.indexOf('- path: /opt/metal-l2/netcfg.json');
    encoded = lines
      .slice(at + 1, at + 5)
      .find((l) => l.startsWith('  content: '))
      ?.slice('  content: '.length);
  }
  if (encoded === undefined) throw new Error(`${name}: no /opt/metal-l2/netcfg.json in its bootstrap data`);
  return JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')) as { metadataUrl: string };
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
 * The fleet: the release before records brings up the first machines (checked: it recorded only the
 * bytes' hash) and stops; the previous release takes them over and brings up its own (recorded with
 * renderer version 1) and stops; this release starts, with the same --metadata-url. Made by the first
 * test that asks, so each can run alone.
 */
const upgradeFleet = onFirstUse(async () => {
  const metadataUrl = `${world.sim.url}/metadata`;
  const oldest = await startRelease(RELEASE_BEFORE_RECORDS, metadataUrl);
  await createVlans(world, [1000]);
  await createPool(world, 'vlan-1000', 10);
  const ports = [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }];
  await createTemplate(world, 'hb', ports);
  await linkClusterToVip(world, { vip: VIP, virtualRouterID: 77 });
  for (const name of OLDEST) await createMachine(world, name, 'hb', { controlPlane: CONTROL_PLANES.has(name) });
  const bootstrap = new Map<string, Awaited<ReturnType<typeof bootstrapData>>>();
  for (const name of OLDEST) {
    const mn = await waitMachineNetworkReady(world, name, 90_000);
    const data = await bootstrapData(name);
    bootstrap.set(name, data);
    // What the release before records recorded: the bytes' hash only, the one the bootstrap data's marker carries.
    expect(mn.status?.userData).toEqual({ secretName: `${name}-bootstrap`, hash: readInjectionHash(data.value) });
    expect(data.metadataUrl).toBe(metadataUrl);
    // The control planes announce the VIP (keepalived in their user data); the worker does not.
    expect((await injectedText(world, name)).includes(`${VIP}/24`)).toBe(CONTROL_PLANES.has(name));
  }
  // It assigned the VLANs: its writes are seen, so a write of a later release would be.
  expect(world.sim.requests.entries({ userAgent: CONTROLLER_AGENT }).filter((e) => e.method !== 'GET').length).toBeGreaterThan(0);
  await oldest.kill();

  const previousRelease = await startRelease(PREVIOUS_RELEASE, metadataUrl);
  // It fills in the oldest machines' records (a fingerprint, no renderer version) ...
  for (const name of OLDEST) await recordFilledIn(name);
  // ... and brings up machines of its own: a cloud-config worker and a Flatcar one (networkd).
  await createTemplate(world, 'hb-flatcar', ports, { renderer: 'networkd' });
  await createMachine(world, 'wk-1', 'hb');
  await createMachine(world, 'fc-0', 'hb-flatcar', { format: 'ignition', value: CABPK_IGNITION_JOIN });
  for (const name of PREVIOUS) {
    const mn = await waitMachineNetworkReady(world, name, 90_000);
    const data = await bootstrapData(name);
    bootstrap.set(name, data);
    expect(mn.status?.userData).toMatchObject({
      secretName: `${name}-bootstrap`,
      hash: readInjectionHash(data.value),
      rendererVersion: PREVIOUS_RENDERER_VERSION,
      fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(data.metadataUrl).toBe(metadataUrl);
  }
  expect(JSON.parse(bootstrap.get('fc-0')?.value ?? '{}')).toMatchObject({ ignition: { version: '2.3.0' } });

  // From here on every version of every MachineNetwork and Secret is seen.
  const machineNetworks = await watchFromNow('machinenetworks');
  const secrets = await watchFromNow('secrets');
  await previousRelease.kill();
  const mark = world.sim.requests.lastSeq();
  // This release renders another boot script: every machine's bytes differ from what it renders now.
  expect(RENDERER_VERSION).toBeGreaterThan(PREVIOUS_RENDERER_VERSION);
  await world.restartNetworkController({ metadataUrl });
  upgraded = { machineNetworks, secrets, mark, bootstrap };
});

/** Waits until the previous release has filled in a machine's record (what it checks on every pass). */
async function recordFilledIn(name: string): Promise<void> {
  await waitFor(
    `MachineNetwork ${name}'s record filled in by ${PREVIOUS_RELEASE}`,
    async () => {
      const mn = await world.objects.get(netKinds.machineNetwork, name, world.ns);
      if (mn?.status?.userData?.fingerprint !== undefined && condition(mn, 'Ready')?.status === 'True') return mn;
      throw new Error(JSON.stringify(mn?.status ?? 'no MachineNetwork'));
    },
    { timeoutMs: 30_000 },
  );
}

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
    'the machines of the previous releases (two control planes announcing the VIP, two workers, a Flatcar machine) stay Ready through the upgrade to a release that renders another boot script: InjectedByOlderRelease, no Metal write, no Secret write',
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
        const recorded = (OLDEST as readonly string[]).includes(name) ? undefined : PREVIOUS_RENDERER_VERSION;
        expect(mn.status?.userData?.rendererVersion).toBe(recorded);
        expect(mn.status?.userData?.announcedEndpoint).toEqual(CONTROL_PLANES.has(name) ? ANNOUNCED : undefined);
        const injected = condition(mn, 'UserDataInjected');
        expect(injected?.status).toBe('True');
        expect(injected?.message).toContain(
          recorded === undefined
            ? 'an earlier metal-l2 release'
            : `renderer version ${recorded} (this release renders version ${RENDERER_VERSION})`,
        );
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
      const restored = ['cp-0', 'wk-0', 'fc-0'];
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
