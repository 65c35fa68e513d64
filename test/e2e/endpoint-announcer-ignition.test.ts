import { describe, expect, test } from '@jest/globals';
import { ENDPOINT_UNIT, renderEndpointUnit } from '@metal-l2/machine-config';
import { testTimeout } from '@metal-l2/test-support/timeouts';
import { CABPK_IGNITION_JOIN, CABPK_OWN_FINDINGS } from '../../packages/machine-config/test/fixtures/ignition.js';
import { ignitionBinaries, validateIgnition } from '../../packages/machine-config/test/support/ignition.js';
import {
  condition,
  createMachine,
  createPool,
  createTemplate,
  createVlans,
  netKinds,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
  waitMachineNetworkReason,
} from './support/network-world.js';
import { bootstrapSecret, linkClusterToVip } from './support/vip-cluster.js';

// A Flatcar (Ignition) control plane of a Cluster on a VIP of ours runs keepalived from the
// controller's --announcer-image: without one it is refused with its own reason and stays held
// (never created without its announcer); with one it is injected with the announcer unit, which the
// real ignition-validate accepts, and goes on to Ready.

const IMAGE = 'ghcr.io/metal-l2/metal-l2:0.1.0';
const world = useNetworkWorld('net-announcer-ign');

describe('the VIP announcer of an Ignition control plane', () => {
  test(
    'no --announcer-image: AnnouncerImageNotConfigured and held; with one: the unit with that image, valid Ignition, Ready',
    async () => {
      await ignitionBinaries(); // built by .ci/run beforehand; else built here, once (minutes)
      await createVlans(world, [1000]);
      await createPool(world, 'vlan-1000', 10);
      const ports = [{ name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] }];
      await createTemplate(world, 'fc-hb', ports, { renderer: 'networkd' });
      await linkClusterToVip(world, { vip: '192.168.10.241', virtualRouterID: 62 });
      await createMachine(world, 'fc-cp-0', 'fc-hb', { controlPlane: true, format: 'ignition', value: CABPK_IGNITION_JOIN });

      const refused = await waitMachineNetworkReason(
        world,
        'fc-cp-0',
        { type: 'UserDataInjected', reason: 'AnnouncerImageNotConfigured' },
        { timeoutMs: 30_000 },
      );
      expect(condition(refused, 'UserDataInjected')?.message).toContain('set --announcer-image');
      expect(condition(refused, 'Ready')).toMatchObject({ status: 'False' });
      const held = await world.objects.get(netKinds.packetMachine, 'fc-cp-0', world.ns);
      expect(held?.metadata.annotations?.['cluster.x-k8s.io/paused']).toBeDefined();
      expect((await bootstrapSecret(world, 'fc-cp-0')).value).toBe(CABPK_IGNITION_JOIN);

      await world.restartNetworkController({ announcerImage: IMAGE });
      await waitMachineNetworkReady(world, 'fc-cp-0', 60_000);
      const { value } = await bootstrapSecret(world, 'fc-cp-0');
      const config = JSON.parse(value) as {
        storage: { files: { path: string; contents: { source: string } }[] };
        systemd: { units: { name: string; contents?: string }[] };
      };
      expect(config.systemd.units.find((u) => u.name === ENDPOINT_UNIT)?.contents).toBe(
        renderEndpointUnit(IMAGE, { after: 'metal-l2.service', before: 'kubeadm.service' }),
      );
      // Nothing of ours installs keepalived: Flatcar has no apt-get.
      const ours = config.storage.files.filter((f) => f.path.startsWith('/opt/metal-l2/'));
      const texts = ours.map((f) => Buffer.from(f.contents.source.replace(/^data:;base64,/, ''), 'base64').toString('utf8'));
      expect(texts.filter((t) => t.includes('apt-get'))).toEqual([]);
      expect(await validateIgnition(value)).toEqual({ code: 0, findings: CABPK_OWN_FINDINGS });
    },
    testTimeout(600_000),
  );
});
