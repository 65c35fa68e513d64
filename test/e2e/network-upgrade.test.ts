import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
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

describe('upgrade from the previous release', () => {
  test(
    'the previous release’s machines (two control planes announcing the VIP, a worker) stay Ready through the upgrade to a release that renders other bytes: InjectedByOlderRelease, no Metal write, no Secret write',
    async () => {
      const oldMetadataUrl = `${world.sim.url}/metadata`;
      const previousRelease = await startPreviousRelease(oldMetadataUrl);

      await createVlans(world, [1000]);
      await createPool(world, 'vlan-1000', 10);
      await createTemplate(world, 'hb', [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }]);
      await linkClusterToVip(world, { vip: VIP, virtualRouterID: 77 });
      for (const name of MACHINES) await createMachine(world, name, 'hb', { controlPlane: CONTROL_PLANES.has(name) });
      const before = new Map<string, Obj>();
      for (const name of MACHINES) before.set(name, await waitMachineNetworkReady(world, name, 90_000));

      // What the previous release recorded: the bytes' hash only, the one the bootstrap data's marker carries.
      const secrets = new Map<string, Awaited<ReturnType<typeof bootstrapData>>>();
      for (const name of MACHINES) {
        const mn = before.get(name);
        const data = await bootstrapData(name);
        secrets.set(name, data);
        expect(mn?.status?.userData).toEqual({ secretName: `${name}-bootstrap`, hash: readInjectionHash(data.value) });
        expect(data.metadataUrl).toBe(oldMetadataUrl);
        // The control planes announce the VIP (keepalived in their user data); the worker does not.
        expect((await injectedText(world, name)).includes(`${VIP}/24`)).toBe(CONTROL_PLANES.has(name));
      }
      const configured = world.sim.requests.entries({ userAgent: CONTROLLER_AGENT }).filter((e) => e.method !== 'GET');
      expect(configured.length).toBeGreaterThan(0); // the previous release assigned the VLANs: its writes are seen

      // From here on every version of every MachineNetwork and Secret is seen.
      const machineNetworks = await watchFromNow('machinenetworks');
      const secretWatch = await watchFromNow('secrets');
      await previousRelease.kill();
      const mark = world.sim.requests.lastSeq();

      // This release, with another --metadata-url: every machine's bytes differ from what it renders now.
      const newMetadataUrl = 'https://metadata.platformequinix.com/metadata';
      expect(newMetadataUrl).not.toBe(oldMetadataUrl);
      await world.restartNetworkController({ metadataUrl: newMetadataUrl });

      // The new controller reconciled every machine: the records are filled in.
      const after = new Map<string, Obj>();
      for (const name of MACHINES) {
        after.set(
          name,
          await waitFor(
            `MachineNetwork ${name} checked by this release`,
            async () => {
              const mn = await world.objects.get(netKinds.machineNetwork, name, world.ns);
              if (mn?.status?.userData?.fingerprint !== undefined && condition(mn, 'UserDataInjected')?.reason === 'InjectedByOlderRelease')
                return mn;
              throw new Error(JSON.stringify(mn?.status ?? 'no MachineNetwork'));
            },
            { timeoutMs: 30_000 },
          ),
        );
      }
      for (const name of MACHINES) {
        const mn = after.get(name);
        const hash = readInjectionHash(secrets.get(name)?.value ?? '') ?? '';
        expect(mn?.status?.userData).toMatchObject({
          secretName: `${name}-bootstrap`,
          hash,
          fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
        });
        // Injected by a release that recorded no renderer version: none is made up for it.
        expect(mn?.status?.userData?.rendererVersion).toBeUndefined();
        expect(mn?.status?.userData?.announcedEndpoint).toEqual(
          CONTROL_PLANES.has(name) ? { address: VIP, prefix: 24, port: 6443, vxlan: 1000, virtualRouterID: 77 } : undefined,
        );
        const injected = condition(mn, 'UserDataInjected');
        expect(injected?.status).toBe('True');
        // The bytes really differ: the message names both hashes.
        const renders = /this release renders sha256:([0-9a-f]{12})/.exec(injected?.message ?? '')?.[1];
        expect(renders).toBeDefined();
        expect(hash.startsWith(renders ?? '')).toBe(false);
        expect(injected?.message).toContain('nothing needs doing');
        expect(condition(mn, 'Ready')).toMatchObject({ status: 'True', reason: 'Ready' });
      }
      // A while more after it reconciled every machine: still nothing.
      await staysTrue(
        'no Ready flip, no Metal write and no Secret write after the upgrade',
        () =>
          flips(machineNetworks).length === 0 &&
          world.sim.requests.entries({ afterSeq: mark, userAgent: CONTROLLER_AGENT }).every((e) => e.method === 'GET') &&
          secretWatch.events().length === 0,
        timeouts.nothingHappens,
      );
      expect(flips(machineNetworks)).toEqual([]);
      expect(machineNetworks.events().length).toBeGreaterThanOrEqual(MACHINES.length); // the watch saw the records filled in
      expect(world.sim.requests.entries({ afterSeq: mark, userAgent: CONTROLLER_AGENT }).filter((e) => e.method !== 'GET')).toEqual([]);
      expect(secretWatch.events().map((e) => `${e.phase} ${e.object.metadata.name}`)).toEqual([]);
      for (const name of MACHINES) expect((await bootstrapData(name)).resourceVersion).toBe(secrets.get(name)?.resourceVersion);
      // No Warning per machine (nor any other Event about its injection).
      for (const name of MACHINES) expect(eventsOf(world, name).filter((e) => e.type === 'Warning')).toEqual([]);
    },
    testTimeout(300_000),
  );
});
