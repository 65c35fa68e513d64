import { describe, expect, test } from '@jest/globals';
import { elasticIpIdentifier } from '@metal-l2/capp-fixture';
import type { IPReservation } from '@metal-l2/metal-api';
import type { RequestLogEntry } from '@metal-l2/metal-sim';
import { waitFor } from '@metal-l2/test-support/wait-for';
import {
  CLUSTER,
  CONTROLLER_AGENT,
  PROJECT_ID,
  createMachine,
  createPool,
  createTemplate,
  createVlans,
  deviceIdOfMachine,
  netKinds,
  playBootScript,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
} from './support/network-world.js';

// A control-plane machine (CAPI's control-plane label) of a CPEM cluster (the default vipManager)
// through our flow in each mode. CAPP (the fixture) assigns the cluster's endpoint reservation, the
// elastic IP, to the first control-plane device once it is active; our controller converts the
// ports. Asserted: the MachineNetwork, whether the elastic IP is on the device at the end, and
// the assignment calls CAPP made. In the layer-2 modes the conversion takes the elastic IP off, and
// the simulator refuses to assign it to a device whose bond0 is in layer 2 (ip-assignment-needs-layer3),
// so CAPP logs the refusal and retries after its requeue, for ever, while the machine stays ready.
// Each mode gets its own cluster-wide reservation in turn: the previous machine is deleted first, and
// with it its elastic IP (the simulator frees a deleted device's assignments), so every machine is
// "the first control plane".

/**
 * The fixture's requeue after a refused assignment: CAPP's is 20 s (the fixture's default, and the
 * real CAPP's in test/e2e/capi), shortened here so that waiting for a retry costs seconds. It stays
 * well above the millisecond spacing of the refusals the wake-ups around the conversion bring.
 */
const CAPP_REQUEUE_MS = 4_000;

const world = useNetworkWorld('net-cp', { cappVipRetryMs: CAPP_REQUEUE_MS });

const CAPP_AGENT = 'cluster-api-provider-packet/';

interface ModeCase {
  readonly mode: string;
  readonly ports: unknown[];
  readonly bootScript: boolean;
  /** What happens to the elastic IP once our controller has configured the ports. */
  readonly after: string;
}

const cases: readonly ModeCase[] = [
  { mode: 'layer3', ports: [{ name: 'bond0' }], bootScript: false, after: 'it stays there' },
  {
    mode: 'hybrid-bonded',
    ports: [{ name: 'bond0', vlans: [{ vxlan: 1100, addressesFromPools: [poolRef('cp-1100')] }] }],
    bootScript: false,
    after: 'it stays there',
  },
  {
    mode: 'hybrid',
    ports: [
      {
        name: 'eth1',
        bonded: false,
        vlans: [
          { vxlan: 1100, native: true, addressesFromPools: [poolRef('cp-1100')] },
          { vxlan: 1101, addressesFromPools: [poolRef('cp-1101')] },
        ],
      },
    ],
    bootScript: false,
    after: 'it stays there',
  },
  {
    mode: 'layer2-bonded',
    ports: [
      {
        name: 'bond0',
        layer2: true,
        vlans: [
          { vxlan: 1100, native: true, addressesFromPools: [poolRef('cp-1100')] },
          { vxlan: 1101, addressesFromPools: [poolRef('cp-1101')] },
        ],
      },
    ],
    bootScript: true,
    after: 'the conversion takes it off; assigning it again is refused and retried after CAPP’s requeue, the machine staying ready',
  },
  {
    mode: 'layer2-individual',
    ports: [
      { name: 'bond0', layer2: true, bonded: false },
      { name: 'eth0', vlans: [{ vxlan: 1100, addressesFromPools: [poolRef('cp-1100')] }] },
      { name: 'eth1', vlans: [{ vxlan: 1101, addressesFromPools: [poolRef('cp-1101')] }] },
    ],
    bootScript: true,
    after: 'the conversion takes it off; assigning it again is refused and retried after CAPP’s requeue, the machine staying ready',
  },
];

async function clusterReservation(): Promise<IPReservation> {
  for await (const r of world.metal.ipReservations.list(PROJECT_ID)) {
    if (r.type !== 'vrf' && (r.tags ?? []).includes(elasticIpIdentifier(CLUSTER))) return r;
  }
  throw new Error('no endpoint reservation for the cluster');
}

let ready = false;
async function setup(): Promise<void> {
  if (ready) return;
  ready = true;
  await createVlans(world, [1100, 1101]);
  await createPool(world, 'cp-1100', 40);
  await createPool(world, 'cp-1101', 41);
}

/** The machine before, deleted: its device goes, and with it the elastic IP's assignment. */
async function deleteMachine(name: string): Promise<void> {
  // As CAPI's Machine finalizer does: the PacketMachine goes first (CAPP needs its owner Machine to delete).
  await world.objects.delete(netKinds.packetMachine, name, world.ns);
  await waitFor(`PacketMachine ${name} gone`, async () => (await world.objects.get(netKinds.packetMachine, name, world.ns)) === undefined, {
    timeoutMs: 60_000,
  });
}

describe('a CPEM control-plane machine in each mode', () => {
  let previous: string | undefined;
  test.each(cases)(
    '$mode: the network is configured, CAPP assigns the elastic IP to the active device, and $after',
    async ({ mode, ports, bootScript }) => {
      await setup();
      if (previous !== undefined) await deleteMachine(previous);
      const name = `cp-${mode}`;
      previous = name;
      // The previous device's deletion frees the elastic IP (the simulator deprovisions it first).
      const reservation = await waitFor(
        'the endpoint reservation unassigned',
        async () => {
          const r = await clusterReservation();
          return (r.assignments ?? []).length === 0 ? r : undefined;
        },
        { timeoutMs: 30_000 },
      );

      await createTemplate(world, `cp-${mode}`, ports);
      await createMachine(world, name, `cp-${mode}`, { controlPlane: true });
      if (bootScript) await playBootScript(world, name);
      const mn = await waitMachineNetworkReady(world, name);
      expect(mn.status.networkType).toBe(mode);
      const deviceId = await deviceIdOfMachine(world, name);

      // CAPP assigns the elastic IP once the device is active: in every mode that happens before our
      // controller touches the ports (it also waits for active, and for layer 2 for the boot script).
      const assignments = await waitFor(
        `CAPP's elastic-IP assignment to ${name}`,
        () => {
          const calls = world.sim.requests.entries({ operationId: 'createIPAssignment', deviceId, userAgent: CAPP_AGENT });
          return calls.length > 0 ? calls : undefined;
        },
        { timeoutMs: 30_000 },
      );
      expect(assignments[0]?.status).toBe(201);
      // The MachineNetwork is Ready, so our controller has made its port changes: a VLAN batch in
      // every mode but layer3 (disbonding or converting first in hybrid and layer 2), none in layer3.
      const firstConversion = world.sim.requests
        .entries({ deviceId, userAgent: CONTROLLER_AGENT })
        .find(
          (e) => e.operationId === 'convertLayer2' || e.operationId === 'disbondPort' || e.operationId === 'createPortVlanAssignmentBatch',
        );
      if (mode === 'layer3') {
        expect(firstConversion).toBeUndefined();
      } else {
        expect(firstConversion).toBeDefined();
        expect(assignments[0]!.seq).toBeLessThan(firstConversion!.seq);
      }
      await waitFor(
        `PacketMachine ${name} ready`,
        async () => (await world.objects.get(netKinds.packetMachine, name, world.ns))?.status?.ready === true,
        {
          timeoutMs: 30_000,
        },
      );

      const device = await world.metal.devices.get(deviceId);
      const onDevice = (d: { ip_addresses?: { address?: string }[] }): boolean =>
        (d.ip_addresses ?? []).some((a) => a.address === reservation.address);
      const conversion = world.sim.requests.entries({ deviceId, operationId: 'convertLayer2', userAgent: CONTROLLER_AGENT })[0];
      if (!mode.startsWith('layer2')) {
        expect(conversion).toBeUndefined();
        expect(onDevice(device)).toBe(true);
        expect((await clusterReservation()).assignments ?? []).toHaveLength(1);
        return;
      }
      // Converting bond0 to layer 2 takes every layer-3 address off the device, the elastic IP with
      // it; the reservation is unassigned again. CAPP's next reconcile of the machine (here a Machine
      // event; in a real cluster at the latest the 10-minute resync) sees no assignment and assigns
      // the address again, to the same (now layer-2) device: Metal cannot route it to a layer-2
      // bond0 and refuses. CAPP logs the error and requeues (CAPP_REQUEUE_MS) without an error, before
      // SetReady, so the machine keeps the ready status it had, and the retries never end.
      expect(conversion).toBeDefined();
      const logMark = world.cappLogLines.length;
      await world.objects.patch(netKinds.machine, name, world.ns, { metadata: { annotations: { 'metal-l2.test/resync': '1' } } });
      const againCalls = (): RequestLogEntry[] =>
        world.sim.requests.entries({ operationId: 'createIPAssignment', deviceId, userAgent: CAPP_AGENT, afterSeq: conversion!.seq });
      const again = await waitFor(`CAPP assigning the elastic IP again after the conversion of ${name}`, () => againCalls()[0], {
        timeoutMs: 30_000,
      });
      expect(again.status).toBe(422);
      expect(again.rule).toBe('ip-assignment-needs-layer3');
      await waitFor(
        `CAPP logging the refused assignment of ${name}`,
        () =>
          world.cappLogLines
            .slice(logMark)
            .some(
              (line) => line.includes('err assigining elastic ip to control plane. retrying...') && line.includes(`"machine":"${name}"`),
            ),
        { timeoutMs: 10_000 },
      );
      // The wake-ups around the conversion (our controller's writes, the Machine event) may each
      // bring a reconcile and a refusal within milliseconds; the retry is the call that comes the
      // requeue after the one before it, with nothing else waking CAPP.
      const gapMs = (a: RequestLogEntry, b: RequestLogEntry): number => Date.parse(b.at) - Date.parse(a.at);
      const retry = await waitFor(
        `CAPP retrying the elastic IP of ${name} ${CAPP_REQUEUE_MS} ms later`,
        () => {
          const calls = againCalls();
          return calls.find((c, k) => k > 0 && gapMs(calls[k - 1]!, c) >= CAPP_REQUEUE_MS - 100);
        },
        { timeoutMs: CAPP_REQUEUE_MS + 30_000 },
      );
      expect(retry.status).toBe(422);
      expect(retry.rule).toBe('ip-assignment-needs-layer3');
      const machine = await world.objects.get(netKinds.packetMachine, name, world.ns);
      expect(machine?.status?.ready).toBe(true);
      const after = await world.metal.devices.get(deviceId);
      expect((after as { network_type?: string }).network_type).toBe(mode);
      expect(onDevice(after)).toBe(false);
      expect((await clusterReservation()).assignments ?? []).toHaveLength(0);
    },
  );
});
