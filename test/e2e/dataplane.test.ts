import { describe, expect, test } from '@jest/globals';
import { cabpkIgnition } from '@metal-l2/capp-fixture';
import { IGNITION_UNIT } from '@metal-l2/machine-config';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { BOOT_MS, OS_NIC_OF_PORT, useDataplaneWorld } from './support/dataplane-rack.js';
import {
  createMachine,
  createPool,
  createTemplate,
  createVlans,
  deviceIdOfMachine,
  machineNetwork,
  netKinds,
  poolRef,
  waitMachineNetworkReady,
} from './support/network-world.js';

// The data plane: servers made through the full flow (our webhook, IPAM, the network controller,
// the CAPP fixture) boot as real Debian guests under QEMU with exactly the user data their device
// holds; their own cloud-init runs it, and the boot script configures the network. Their NICs plug
// into a switch that forwards as the simulator's live port state says. Pings run inside the guests
// through the image's command agent.
//
//   hb   hybrid-bonded       bond0: VLAN 1000 and VLAN 1001 (mtu 9000), tagged
//   l2i  layer2-individual   eth0: VLAN 1000 tagged; eth1: VLAN 1002 native (untagged) + 1003 tagged
//   hy   hybrid              bond0 (eth0): VLAN 1001 (mtu 9000) tagged; eth1 out of the bond: VLAN 1002 native
//                            + 1003 tagged (a native VLAN needs another VLAN on its port)
//   fc   hybrid-bonded       as hb, on a Flatcar-style guest (issue 31): its bootstrap data is CABPK
//                            v1.7.9's real Ignition (packages/capp-fixture/fixtures), our controller
//                            injects into it, Ignition's own files stage writes it onto the guest's
//                            root, and systemd-networkd (no cloud-init, no ifupdown) brings it up.
//                            As on Flatcar, it has no python3 and its awk is gawk: the boot script
//                            runs on what stock Flatcar ships.
//
// The VLAN batches are held (a simulator fault on createPortVlanAssignmentBatch) until the guests
// have configured their network, so "before the assignment" is observed, not raced.

const { world, rack } = useDataplaneWorld('dataplane');
const MACHINES = ['hb', 'l2i', 'hy'] as const;
const FLATCAR = 'fc';
type Machine = (typeof MACHINES)[number] | typeof FLATCAR;

const addresses = new Map<string, string>(); // `${machine}/${vxlan}` -> address
function address(machine: Machine, vxlan: number): string {
  const a = addresses.get(`${machine}/${vxlan}`);
  if (a === undefined) throw new Error(`no address for ${machine} on VLAN ${vxlan}`);
  return a;
}

let holdBatches = '';
const batchCompletedAt = new Map<string, number>(); // portId -> host time the batch completed

/** The MTU of VLAN 1001 on hb's and hy's bond0; Metal's ports (and VLANs without an mtu) are at 1500. */
const JUMBO = 9000;

/** The MTU of each OS interface, read inside the guest (`cat` prints them in order, one a line). */
async function guestMtus(machine: Machine, interfaces: readonly string[]): Promise<Record<string, number>> {
  const r = await rack.run(machine, ['cat', ...interfaces.map((i) => `/sys/class/net/${i}/mtu`)]);
  expect(r.code).toBe(0);
  const mtus = r.stdout.trim().split('\n').map(Number);
  return Object.fromEntries(interfaces.map((i, n) => [i, mtus[n] ?? Number.NaN]));
}

async function guestHasAddress(machine: Machine, addr: string): Promise<boolean> {
  const r = await rack.run(machine, ['ip', '-o', 'addr', 'show']);
  return r.stdout.includes(` ${addr}/`);
}

describe('data plane', () => {
  test(
    'guests boot the injected user data and configure their VLAN interfaces; before the VLANs are assigned they cannot reach each other',
    async () => {
      holdBatches = world.sim.faults.add({ fault: 'server-error', status: 503, operationId: 'createPortVlanAssignmentBatch' }).id;
      world.sim.store.subscribe((change) => {
        if (change.kind !== 'batch' || change.action !== 'state') return;
        if (world.sim.store.batches.get(change.batchId)?.state === 'completed') batchCompletedAt.set(change.portId, Date.now());
      });
      await createVlans(world, [1000, 1001, 1002, 1003]);
      await createPool(world, 'v1000', 10);
      await createPool(world, 'v1001', 11);
      await createPool(world, 'v1002', 12);
      const hybridBonded = [
        {
          name: 'bond0',
          vlans: [
            { vxlan: 1000, addressesFromPools: [poolRef('v1000')] },
            { vxlan: 1001, mtu: JUMBO, addressesFromPools: [poolRef('v1001')] },
          ],
        },
      ];
      await createTemplate(world, 'hb', hybridBonded);
      await createTemplate(world, FLATCAR, hybridBonded, { renderer: 'networkd' });
      await createTemplate(world, 'l2i', [
        { name: 'bond0', layer2: true, bonded: false },
        { name: 'eth0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('v1000')] }] },
        { name: 'eth1', vlans: [{ vxlan: 1002, native: true, addressesFromPools: [poolRef('v1002')] }, { vxlan: 1003 }] },
      ]);
      await createTemplate(world, 'hy', [
        { name: 'bond0', vlans: [{ vxlan: 1001, mtu: JUMBO, addressesFromPools: [poolRef('v1001')] }] },
        { name: 'eth1', bonded: false, vlans: [{ vxlan: 1002, native: true, addressesFromPools: [poolRef('v1002')] }, { vxlan: 1003 }] },
      ]);
      for (const m of MACHINES) await createMachine(world, m, m);
      await createMachine(world, FLATCAR, FLATCAR, { format: 'ignition', value: cabpkIgnition() });

      const started = Date.now();
      await Promise.all(
        [...MACHINES, FLATCAR].map(async (m) => {
          const deviceId = await deviceIdOfMachine(world, m);
          await waitFor(`device of ${m} active`, () => world.sim.store.devices.get(deviceId)?.state === 'active', { timeoutMs: 60_000 });
          if (m === FLATCAR) {
            const server = await rack.boot(m, deviceId, { os: 'flatcar' });
            const uptimeSec = await server.guest.waitForUnit(IGNITION_UNIT, BOOT_MS);
            server.boot = { uptimeSec, wallMs: Date.now() - server.guest.startedAt };
            return;
          }
          const server = await rack.boot(m, deviceId);
          const uptimeSec = await server.guest.waitForCloudInit(BOOT_MS);
          server.boot = { uptimeSec, wallMs: Date.now() - server.guest.startedAt };
        }),
      );
      for (const m of [...MACHINES, FLATCAR]) {
        const boot = rack.server(m).boot;
        const what = m === FLATCAR ? `${IGNITION_UNIT} done` : 'cloud-init final';
        console.log(
          `data plane: ${m} booted its user data: ${what} at ${boot?.uptimeSec.toFixed(1)} s guest uptime, ${((boot?.wallMs ?? 0) / 1000).toFixed(1)} s wall from QEMU start`,
        );
      }
      console.log(`data plane: 4 guests up in ${((Date.now() - started) / 1000).toFixed(1)} s`);

      for (const m of [...MACHINES, FLATCAR]) {
        const mn = await machineNetwork(world, m);
        for (const a of (mn?.status?.addresses ?? []) as { vxlan: number; address: string }[]) addresses.set(`${m}/${a.vxlan}`, a.address);
      }
      // An agent answer crosses virtio-serial, which takes 32 KiB a write: a larger one arrives whole.
      const large = await rack.run('hb', ['sh', '-c', 'yes metal-l2 | head -c 200000']);
      expect(large.stdout).toHaveLength(200_000);
      // The guests' own cloud-init ran the boot script, from the device's user data, through the metadata host.
      for (const m of MACHINES) {
        const userdata = await rack.run(m, ['cat', '/var/lib/cloud/instance/user-data.txt']);
        expect(userdata.stdout).toBe(world.sim.store.devices.get(rack.server(m).deviceId)?.userdata);
        expect(rack.server(m).forwarder.requests).toEqual(expect.arrayContaining([{ method: 'GET', path: '/metadata', status: 200 }]));
      }
      // fc's reached its root through Ignition's files stage (CABPK's spec 2.3 with our part), not
      // cloud-init: no cloud-init instance, ifupdown never ran, systemd-networkd configured the VLANs.
      const fc = rack.server(FLATCAR);
      expect(JSON.parse(world.sim.store.devices.get(fc.deviceId)?.userdata ?? '{}')).toMatchObject({ ignition: { version: '2.3.0' } });
      expect(fc.ignition?.files).toEqual(
        expect.arrayContaining(['etc/systemd/system/kubeadm.service', `etc/systemd/system/${IGNITION_UNIT}`]),
      );
      expect(fc.forwarder.requests).toEqual(expect.arrayContaining([{ method: 'GET', path: '/metadata', status: 200 }]));
      const fcState = await rack.run(FLATCAR, [
        'sh',
        '-c',
        'test -e /var/lib/cloud/instance && echo cloud-init ran; systemctl is-active networking.service systemd-networkd.service; networkctl list --no-legend bond0.1000 bond0.1001',
      ]);
      const [networking, networkd, ...links] = fcState.stdout.trim().split('\n');
      expect([networking, networkd]).toEqual(['inactive', 'active']);
      // networkctl lists by ifindex, and networkd creates the two netdevs in either order.
      expect(links.map((l) => l.trim().split(/\s+/).slice(1, 3)).sort()).toEqual([
        ['bond0.1000', 'vlan'],
        ['bond0.1001', 'vlan'],
      ]);
      expect(links.every((l) => l.trim().endsWith('configured'))).toBe(true);
      // No python3 anywhere on its PATH (the harness agent's interpreter lives outside it), awk is gawk:
      // the boot script above ran with neither Python nor Debian's mawk.
      const fcTools = await rack.run(FLATCAR, ['sh', '-c', 'command -v python3 python3.11 python; readlink -f "$(command -v awk)"']);
      expect(fcTools.stdout).toBe('/usr/bin/gawk\n');
      for (const [m, vxlan] of [
        ['hb', 1000],
        ['hb', 1001],
        ['l2i', 1000],
        ['l2i', 1002],
        ['hy', 1001],
        ['hy', 1002],
        ['fc', 1000],
        ['fc', 1001],
      ] as const) {
        expect(await guestHasAddress(m, address(m, vxlan))).toBe(true);
      }
      // Before the VLANs are assigned, nothing passes.
      expect(world.sim.store.batches.size).toBe(0);
      expect(await rack.ping('fc', address('l2i', 1000))).toBe(false);
      expect(await rack.ping('hb', address('l2i', 1000))).toBe(false);
      expect(await rack.ping('l2i', address('hb', 1000))).toBe(false);
      expect(await rack.ping('l2i', address('hy', 1002))).toBe(false);
      expect(await rack.ping('hb', address('hy', 1001))).toBe(false);

      // mtu 9000 on VLAN 1001 raised bond0 and, through the bonding driver, its slaves; VLAN 1000
      // (no mtu) stays at Metal's 1500, though it was created on a 9000 bond. On hy the bond has one
      // slave left (eth1 is out of it, and keeps 1500).
      const [ens4, ens5] = [OS_NIC_OF_PORT['eth0'] ?? 'eth0', OS_NIC_OF_PORT['eth1'] ?? 'eth1'];
      expect(await guestMtus('hb', ['bond0.1001', 'bond0', ens4, ens5, 'bond0.1000'])).toEqual({
        'bond0.1001': JUMBO,
        bond0: JUMBO,
        [ens4]: JUMBO,
        [ens5]: JUMBO,
        'bond0.1000': 1500,
      });
      expect(await guestMtus('fc', ['bond0.1001', 'bond0', ens4, ens5, 'bond0.1000'])).toEqual({
        'bond0.1001': JUMBO,
        bond0: JUMBO,
        [ens4]: JUMBO,
        [ens5]: JUMBO,
        'bond0.1000': 1500,
      });
      expect(await guestMtus('hy', ['bond0.1001', 'bond0', ens4, ens5])).toEqual({
        'bond0.1001': JUMBO,
        bond0: JUMBO,
        [ens4]: JUMBO,
        [ens5]: 1500,
      });

      const hb = rack.server('hb');
      const ipAddr = await rack.run('hb', ['ip', '-d', 'addr']);
      const cfg = await rack.run('hb', ['cat', '/etc/network/interfaces.d/60-metal-l2.cfg']);
      console.log(
        `data plane: hb (${hb.deviceId}) as the OS saw it\n$ ip -d addr\n${ipAddr.stdout}\n$ cat /etc/network/interfaces.d/60-metal-l2.cfg\n${cfg.stdout}`,
      );
      const l2i = await rack.run('l2i', ['sh', '-c', 'ip -d addr; cat /etc/network/interfaces.d/60-metal-l2.cfg']);
      console.log(`data plane: l2i as the OS saw it\n${l2i.stdout}`);
      const fcOs = await rack.run(FLATCAR, [
        'sh',
        '-c',
        'networkctl list; ip -d addr; head -n 50 /etc/systemd/network/* /etc/systemd/network/*/*',
      ]);
      console.log(`data plane: fc (Flatcar-style) as the OS saw it; Ignition wrote ${fc.ignition?.files.join(', ')}\n${fcOs.stdout}`);
    },
    BOOT_MS + 5 * 60_000,
  );

  test(
    'once the VLANs are assigned, hybrid-bonded and layer2-individual reach each other on VLAN 1000; native VLAN and a second VLAN on the bond work',
    async () => {
      world.sim.faults.remove(holdBatches);
      // The controller backs off after each refused batch (up to 5 minutes, as controller-runtime
      // does; 3 s in these files: useDataplaneWorld). The annotation wakes each machine, but no
      // Metal call is made until its wait is over (docs/network-controller.md, "Metal errors").
      for (const m of [...MACHINES, FLATCAR])
        await world.objects.patch(netKinds.packetMachine, m, world.ns, {
          metadata: { annotations: { 'dataplane.test/released': String(Date.now()) } },
        });
      for (const m of [...MACHINES, FLATCAR]) await waitMachineNetworkReady(world, m, 6 * 60_000);
      const hbPorts = world.sim.store.devices.get(rack.server('hb').deviceId)?.portIds ?? [];
      const completed = await waitFor(
        'the hybrid-bonded batch to complete',
        () => hbPorts.map((p) => batchCompletedAt.get(p)).find((t) => t !== undefined),
        { timeoutMs: 60_000 },
      );
      const firstPing = await waitFor(
        'hb to reach l2i on VLAN 1000',
        async () => ((await rack.ping('hb', address('l2i', 1000), { count: 1 })) ? Date.now() : false),
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      console.log(
        `data plane: first successful ping ${((firstPing - completed) / 1000).toFixed(1)} s after the hybrid-bonded VLAN batch completed`,
      );

      expect(await rack.ping('l2i', address('hb', 1000))).toBe(true);
      // native VLAN: untagged on l2i's and hy's eth1
      expect(await rack.ping('l2i', address('hy', 1002))).toBe(true);
      // a second VLAN on the same bond: hb's bond0.1001 to hy's bond0.1001
      expect(await rack.ping('hb', address('hy', 1001))).toBe(true);
      expect(await rack.ping('hy', address('hb', 1001))).toBe(true);
      // A jumbo frame crosses VLAN 1001 whole: 8972 bytes of ICMP data + 28 of headers = 9000, don't fragment.
      expect(await rack.ping('hb', address('hy', 1001), { count: 1, size: JUMBO - 28, dontFragment: true })).toBe(true);
      expect(await rack.ping('hy', address('hb', 1001), { count: 1, size: JUMBO - 28, dontFragment: true })).toBe(true);
      // ... and one a byte larger does not leave (the interface's MTU is 9000, not more).
      expect(await rack.ping('hb', address('hy', 1001), { count: 1, size: JUMBO - 27, dontFragment: true })).toBe(false);

      // The Flatcar-style guest, configured by systemd-networkd from Ignition's files, reaches its
      // peers as the cloud-config guests do: VLAN 1000 both ways, VLAN 1001 with a jumbo frame.
      expect(await rack.ping('fc', address('l2i', 1000))).toBe(true);
      expect(await rack.ping('l2i', address('fc', 1000))).toBe(true);
      expect(await rack.ping('fc', address('hy', 1001), { count: 1, size: JUMBO - 28, dontFragment: true })).toBe(true);
      expect(await rack.ping('hy', address('fc', 1001))).toBe(true);
    },
    10 * 60_000,
  );

  test(
    'a server not on VLAN 1000 cannot reach them, even with a VLAN 1000 interface of its own',
    async () => {
      expect(await rack.ping('hy', address('hb', 1000))).toBe(false);
      expect(await rack.ping('hy', address('l2i', 1000))).toBe(false);
      // A probe, not configuration under test: hy tags frames with VLAN 1000 itself; the switch drops them.
      const probe = await rack.run('hy', [
        'sh',
        '-c',
        'ip link add link bond0 name probe1000 type vlan id 1000 && ip addr add 192.168.10.250/24 dev probe1000 && ip link set probe1000 up',
      ]);
      expect(probe.code).toBe(0);
      expect(await rack.ping('hy', address('hb', 1000), { count: 3 })).toBe(false);
      expect(await rack.ping('hy', address('l2i', 1000), { count: 3 })).toBe(false);
      await rack.run('hy', ['ip', 'link', 'del', 'probe1000']);
    },
    3 * 60_000,
  );

  test(
    'after the machine is deleted, the controller unassigns its VLANs and the others cannot reach it',
    async () => {
      const hb = rack.server('hb');
      // Hold the device's deletion (CAPP deletes it right away) so the unassignment, not the device going, is observed.
      const holdDelete = world.sim.faults.add({ fault: 'server-error', status: 503, operationId: 'deleteDevice' }).id;
      try {
        expect(await rack.ping('l2i', address('hb', 1000))).toBe(true);
        await world.objects.delete(netKinds.packetMachine, 'hb', world.ns);
        await waitFor(
          'the VLANs of hb to be unassigned',
          () => {
            const device = world.sim.store.devices.get(hb.deviceId);
            return device !== undefined && device.portIds.every((p) => (world.sim.store.ports.get(p)?.vlans.length ?? 0) === 0);
          },
          { timeoutMs: 120_000, intervalMs: 200 },
        );
        expect(await guestHasAddress('hb', address('hb', 1000))).toBe(true); // the guest did not change
        expect(await rack.ping('l2i', address('hb', 1000), { count: 3 })).toBe(false);
        expect(await rack.ping('hb', address('l2i', 1000), { count: 3 })).toBe(false);
        // the others still reach each other on what they keep
        expect(await rack.ping('l2i', address('hy', 1002))).toBe(true);
      } finally {
        world.sim.faults.remove(holdDelete);
      }
    },
    4 * 60_000,
  );
});
