// Every network-mode transition and back, through the planner and the client, on the simulator:
// the plan applies without a refusal, the device ends in the wanted network type, and planning
// again finds nothing to do.

import { beforeAll, describe, expect, test } from '@jest/globals';
import { applyPortPlan } from '../src/ports.js';
import { describePortCall } from '../src/port-plan/plan.js';
import type { NetworkType } from '../src/port-plan/port-layout.js';
import { planPortChanges } from '../src/port-plan/plan.js';
import { desiredPorts, HYBRID, HYBRID_BONDED, LAYER2_BONDED, LAYER2_INDIVIDUAL, LAYER3 } from '../src/testing/ports.js';
import type { DeviceSketch } from '../src/testing/ports.js';
import { BATCH_POLL_MS, createActiveDevice, describeContract, readDevice, useSimulator } from './support/simulator.js';
import type { SimHarness } from './support/simulator.js';

const harness = useSimulator();

const TYPES: Record<NetworkType, DeviceSketch> = {
  layer3: LAYER3,
  'hybrid-bonded': HYBRID_BONDED,
  hybrid: HYBRID,
  'layer2-bonded': LAYER2_BONDED,
  'layer2-individual': LAYER2_INDIVIDUAL,
};
const NAMES = Object.keys(TYPES) as NetworkType[];

beforeAll(async () => {
  const h = harness();
  // The VLANs the sketches use, plus a same-numbered VLAN in another metro that must never be picked.
  for (const vxlan of [1000, 1001])
    await h.client.virtualNetworks.create(h.projectId, { metro: 'da', vxlan, description: `test ${vxlan}` });
  await h.client.virtualNetworks.create(h.projectId, { metro: 'sv', vxlan: 1000, description: 'other metro' });
});

interface Converged {
  calls: string[];
  from: NetworkType | undefined;
  to: NetworkType | undefined;
  /** Requests that changed the device (everything but reads), as the simulator logged them. */
  writes: number;
}

/** Plans from the device as it is now to `sketch`, applies the plan, and checks nothing is left to do. */
async function converge(h: SimHarness, deviceId: string, sketch: DeviceSketch): Promise<Converged> {
  const vlans = await h.client.virtualNetworks.list(h.projectId);
  const plan = planPortChanges({ device: await readDevice(h, deviceId), desired: desiredPorts(sketch), virtualNetworks: vlans });
  if (plan.kind === 'refused') throw new Error(`plan refused: ${plan.issues.map((i) => i.message).join('; ')}`);
  const before = h.sim.requests.lastSeq();
  const outcome = await applyPortPlan(h.client.ports, plan.calls, { sleep: h.advanceSim, pollIntervalMs: BATCH_POLL_MS });
  expect(outcome).toEqual({ kind: 'applied', callCount: plan.calls.length });
  const writes = h.sim.requests.entries({ afterSeq: before }).filter((e) => e.method !== 'GET').length;

  const again = planPortChanges({ device: await readDevice(h, deviceId), desired: desiredPorts(sketch), virtualNetworks: vlans });
  expect(again).toMatchObject({ kind: 'planned', calls: [], to: plan.to });
  return { calls: plan.calls.map(describePortCall), from: plan.from, to: plan.to, writes };
}

function bondNetworkType(device: { network_ports?: { name?: string; network_type?: string }[] }): string | undefined {
  return device.network_ports?.find((p) => p.name === 'bond0')?.network_type;
}

const pairs = NAMES.flatMap((from) => NAMES.filter((to) => to !== from).map((to) => ({ from, to })));

describe('every network-mode transition on the simulator', () => {
  test.each(pairs)('$from -> $to', async ({ from, to }) => {
    const h = harness();
    const device = await createActiveDevice(h, `${from}-to-${to}`);
    const id = device.id ?? '';

    const setup = await converge(h, id, TYPES[from]);
    expect(setup.to).toBe(from);
    expect(bondNetworkType(await readDevice(h, id))).toBe(from);

    const change = await converge(h, id, TYPES[to]);
    expect(change).toMatchObject({ from, to });
    expect(change.calls.length).toBeGreaterThan(0);
    // One write per planned call: nothing was retried, nothing was refused.
    expect(change.writes).toBe(change.calls.length);
    expect(bondNetworkType(await readDevice(h, id))).toBe(to);
  });

  test('a tour through every type and back to layer3 ends where a new server starts', async () => {
    const h = harness();
    const device = await createActiveDevice(h, 'tour');
    const id = device.id ?? '';
    const tour: NetworkType[] = ['hybrid-bonded', 'layer2-individual', 'hybrid', 'layer2-bonded', 'layer3'];
    for (const type of tour) await converge(h, id, TYPES[type]);
    const end = await readDevice(h, id);
    expect(bondNetworkType(end)).toBe('layer3');
    expect(end.network_ports?.every((p) => p.data?.bonded === true && (p.virtual_networks ?? []).length === 0)).toBe(true);
    // Back in layer 3 the device has public addresses again (convert/layer-3 requested them).
    expect(end.ip_addresses?.some((a) => a.public === true && a.address_family === 4)).toBe(true);
  });

  test('a native VLAN is set on layer2-bonded and cleared on the way back to layer3', async () => {
    const h = harness();
    const device = await createActiveDevice(h, 'native');
    const id = device.id ?? '';
    const withNative: DeviceSketch = { bond0: { layer2: true, vlans: [1000, 1001], native: 1001 } };
    const there = await converge(h, id, withNative);
    expect(there.calls).toEqual(['convertLayer2 bond0', 'createPortVlanAssignmentBatch bond0 +1000 +1001', 'assignNativeVlan bond0 1001']);
    const port = (await readDevice(h, id)).network_ports?.find((p) => p.name === 'bond0');
    expect(port?.native_virtual_network?.vxlan).toBe(1001);
    const back = await converge(h, id, LAYER3);
    expect(back.calls).toEqual(['deleteNativeVlan bond0', 'createPortVlanAssignmentBatch bond0 -1000 -1001', 'convertLayer3 bond0']);
  });

  test('hybrid with eth1 on two VLANs, one of them native', async () => {
    const h = harness();
    const device = await createActiveDevice(h, 'hybrid-native');
    const id = device.id ?? '';
    const result = await converge(h, id, { eth1: { bonded: false, vlans: [1000, 1001], native: 1000 } });
    expect(result.to).toBe('hybrid');
    await converge(h, id, LAYER3);
  });

  test('a 4-port device takes bond1 to layer 2 while bond0 keeps layer 3', async () => {
    const h = harness();
    const device = await createActiveDevice(h, 'four-ports', 'n3.xlarge.x86');
    const id = device.id ?? '';
    const result = await converge(h, id, { bond1: { layer2: true, vlans: [1000] } });
    expect(result).toMatchObject({ calls: ['convertLayer2 bond1', 'createPortVlanAssignmentBatch bond1 +1000'], to: 'hybrid' });
    await converge(h, id, LAYER3);
  });

  test('a network_frozen device is refused before any call', async () => {
    const h = harness();
    const device = await createActiveDevice(h, 'frozen');
    const id = device.id ?? '';
    await h.client.devices.update(id, { network_frozen: true });
    const vlans = await h.client.virtualNetworks.list(h.projectId);
    const plan = planPortChanges({ device: await readDevice(h, id), desired: desiredPorts(HYBRID_BONDED), virtualNetworks: vlans });
    expect(plan).toMatchObject({ kind: 'refused', issues: [{ code: 'NetworkFrozen' }] });
  });

  test('a VLAN that exists only in another metro is refused before any call', async () => {
    const h = harness();
    await h.client.virtualNetworks.create(h.projectId, { metro: 'sv', vxlan: 2000 });
    const device = await createActiveDevice(h, 'other-metro');
    const vlans = await h.client.virtualNetworks.list(h.projectId);
    const plan = planPortChanges({
      device: await readDevice(h, device.id ?? ''),
      desired: [{ name: 'bond0', vlans: [2000] }],
      virtualNetworks: vlans,
    });
    expect(plan).toMatchObject({ kind: 'refused', issues: [{ code: 'VlanInOtherMetro', path: 'desired[0].vlans[0]' }] });
  });
});

describeContract(harness);
