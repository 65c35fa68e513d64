// A property over random port layouts, on the simulator: from any valid layout to any other, the
// planned calls are all accepted by the API, the device ends as asked, and planning again finds
// nothing to do. The simulator enforces the documented rules, so it is the model here.

import { beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { applyPortPlan } from '../src/ports.js';
import { planPortChanges } from '../src/port-plan/plan.js';
import { desiredPorts } from '../src/testing/ports.js';
import type { DeviceSketch, PortSketch } from '../src/testing/ports.js';
import { BATCH_POLL_MS, createActiveDevice, describeContract, readDevice, useSimulator } from './support/simulator.js';
import type { SimHarness } from './support/simulator.js';

const harness = useSimulator();
const VXLANS = [1000, 1001, 1002, 1003];

beforeAll(async () => {
  const h = harness();
  for (const vxlan of VXLANS) await h.client.virtualNetworks.create(h.projectId, { metro: 'da', vxlan });
});

/** VLANs for a port, and a native one when the port may have it and carries at least two. */
function vlansOf(allowNative: boolean): fc.Arbitrary<PortSketch> {
  return fc
    .subarray(VXLANS)
    .chain((vlans) =>
      allowNative && vlans.length >= 2
        ? fc.option(fc.constantFrom(...vlans), { nil: undefined }).map((native) => (native === undefined ? { vlans } : { vlans, native }))
        : fc.constant({ vlans }),
    );
}

/** Any valid layout of a 2-port device. */
const layout: fc.Arbitrary<DeviceSketch> = fc.oneof(
  fc.constant({}),
  vlansOf(false).map((bond0) => ({ bond0 })),
  fc.record({ bond0: vlansOf(false), eth1: vlansOf(true) }).map(({ bond0, eth1 }) => ({ bond0, eth1: { ...eth1, bonded: false } })),
  vlansOf(true).map((bond0) => ({ bond0: { ...bond0, layer2: true } })),
  fc.record({ eth0: vlansOf(true), eth1: vlansOf(true) }).map(({ eth0, eth1 }) => ({
    bond0: { layer2: true, bonded: false },
    eth0: { ...eth0, bonded: false },
    eth1: { ...eth1, bonded: false },
  })),
);

async function converge(h: SimHarness, deviceId: string, sketch: DeviceSketch): Promise<void> {
  const vlans = await h.client.virtualNetworks.list(h.projectId);
  const plan = planPortChanges({ device: await readDevice(h, deviceId), desired: desiredPorts(sketch), virtualNetworks: vlans });
  if (plan.kind === 'refused') throw new Error(`refused: ${plan.issues.map((i) => `${i.code} ${i.message}`).join('; ')}`);
  const outcome = await applyPortPlan(h.client.ports, plan.calls, { sleep: h.advanceSim, pollIntervalMs: BATCH_POLL_MS });
  expect(outcome).toEqual({ kind: 'applied', callCount: plan.calls.length });
  const again = planPortChanges({ device: await readDevice(h, deviceId), desired: desiredPorts(sketch), virtualNetworks: vlans });
  expect(again).toMatchObject({ kind: 'planned', calls: [] });
}

describe('port plans between random layouts', () => {
  test('every plan is accepted by the API and reaches its target', async () => {
    const h = harness();
    let run = 0;
    await fc.assert(
      fc.asyncProperty(layout, layout, async (from, to) => {
        run += 1;
        const device = await createActiveDevice(h, `random-${run}`);
        await converge(h, device.id ?? '', from);
        await converge(h, device.id ?? '', to);
        const refused = h.sim.requests.entries({ deviceId: device.id ?? '' }).filter((e) => e.status >= 400);
        expect(refused).toEqual([]);
      }),
      { numRuns: 40 },
    );
  });
});

describeContract(harness);
