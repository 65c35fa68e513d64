import { describe, expect, test } from '@jest/globals';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { loggedEvents, portAndVlan, vxlansOf } from './support/network-probes.js';
import {
  CONTROLLER_AGENT,
  condition,
  createMachine,
  deviceIdOfMachine,
  useNetworkWorld,
  waitMachineNetworkReady,
  waitMachineNetworkReason,
  createHybridBondedTemplate,
  onFirstUse,
} from './support/network-world.js';

// Drift: a configured machine makes no Metal call at rest but its device is still read once per
// drift period, so a change made outside the controller (the portal, Terraform) is found: one of
// the template's VLANs unassigned is assigned again; anything else is reported, not undone.

const DRIFT_MS = 2_000;
const world = useNetworkWorld('net-drift', { timings: { driftCheckMs: DRIFT_MS } });

const setup = onFirstUse(() => createHybridBondedTemplate(world));

describe('drift', () => {
  test('at rest a machine costs one device read per drift period and nothing else', async () => {
    await setup();
    await createMachine(world, 'rest-0', 'hb');
    await waitMachineNetworkReady(world, 'rest-0');
    const deviceId = await deviceIdOfMachine(world, 'rest-0');
    const mark = world.sim.requests.lastSeq();
    const started = Date.now();
    await waitFor(
      'three drift reads',
      () => world.sim.requests.count({ afterSeq: mark, deviceId, operationId: 'findDeviceById', userAgent: CONTROLLER_AGENT }) >= 3,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const elapsed = Date.now() - started;
    // Three reads take about three periods (±10% jitter each), never a burst.
    expect(elapsed).toBeGreaterThan(DRIFT_MS * 0.9 * 2);
    expect(world.sim.requests.countByOperation({ afterSeq: mark, deviceId, userAgent: CONTROLLER_AGENT })).toEqual({ findDeviceById: 3 });
  });

  test('a VLAN of ours unassigned by hand is assigned again, with a Warning Event', async () => {
    await setup();
    await createMachine(world, 'drift-0', 'hb');
    await waitMachineNetworkReady(world, 'drift-0');
    const deviceId = await deviceIdOfMachine(world, 'drift-0');
    const { portId, vlanId } = await portAndVlan(world, deviceId, 'bond0', 1000);
    await world.metal.ports.unassign(portId, vlanId);
    expect(await vxlansOf(world, deviceId, 'bond0')).toEqual([]);

    await waitFor('VLAN 1000 back on bond0', async () => JSON.stringify(await vxlansOf(world, deviceId, 'bond0')) === '[1000]', {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    await waitFor('the repair reported', () => loggedEvents(world, 'PortDriftRepaired', 'drift-0').length === 1, { timeoutMs: 10_000 });
    expect(loggedEvents(world, 'PortDriftRepaired', 'drift-0')[0]).toContain('1000');
    const mn = await waitMachineNetworkReady(world, 'drift-0');
    expect((mn.status.ports as { name: string }[]).find((p) => p.name === 'bond0')).toMatchObject({ vlans: [1000] });
  });

  test('a port mode changed by hand is reported (PortsConfigured False, PortDrift) and not undone; status shows the device', async () => {
    await setup();
    await createMachine(world, 'drift-1', 'hb');
    await waitMachineNetworkReady(world, 'drift-1');
    const deviceId = await deviceIdOfMachine(world, 'drift-1');
    const { portId, vlanId } = await portAndVlan(world, deviceId, 'bond0', 1001);
    // Someone puts a VLAN of their own on the bond and takes layer 3 away.
    await world.metal.ports.assign(portId, vlanId);
    await world.metal.ports.convertLayer2(portId);

    const mn = await waitMachineNetworkReason(
      world,
      'drift-1',
      { type: 'PortsConfigured', reason: 'PortDrift' },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(condition(mn, 'PortsConfigured')?.status).toBe('False');
    expect(condition(mn, 'PortsConfigured')?.message).toMatch(/bond0.*layer 2/);
    expect(condition(mn, 'PortsConfigured')?.message).toContain('1001');
    expect(condition(mn, 'Ready')).toMatchObject({ status: 'False', reason: 'PortDrift' });
    expect((mn.status.ports as { name: string }[]).find((p) => p.name === 'bond0')).toMatchObject({
      networkType: 'layer2-bonded',
      vlans: [1000, 1001],
    });
    // One Event per distinct finding (a check between the two changes finds only the VLAN).
    expect(loggedEvents(world, 'PortDrift', 'drift-1').at(-1)).toContain('layer 2');
    // Reported, not undone: no write to the device by the controller after the change.
    const writes = world.sim.requests.entries({ deviceId, userAgent: CONTROLLER_AGENT }).filter((e) => e.method !== 'GET');
    expect(writes.map((e) => e.operationId)).toEqual(['createPortVlanAssignmentBatch']);
  });
});
