import { describe, expect, test } from '@jest/globals';
import { BOOT_CONFIG_PATH } from '@metal-l2/machine-config';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { devicePortViews } from './support/network-probes.js';
import {
  FOUR_PORT_PLAN,
  condition,
  createMachine,
  createTemplate,
  deviceIdOfMachine,
  machineNetwork,
  playBootScript,
  poolRef,
  useNetworkWorld,
  waitMachineNetworkReady,
  createTwoVlanPools,
  onFirstUse,
} from './support/network-world.js';

// 4-port servers (bond0 = eth0+eth2, bond1 = eth1+eth3) end to end: the webhook, the reconciler
// and the network files the boot script applies agree on which bond each port follows.

const world = useNetworkWorld('net-four-port');

/** The boot script's ports (which leave the OS bond) as the injected user data carries them. */
function bootPorts(userdata: string): { name: string; kind: string; detach: boolean }[] {
  const escaped = BOOT_CONFIG_PATH.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const match = new RegExp(`- path: ${escaped}\\n(?:  .*\\n)*?  content: (\\S+)`).exec(userdata);
  if (match?.[1] === undefined) throw new Error(`no ${BOOT_CONFIG_PATH} in the user data`);
  return (JSON.parse(Buffer.from(match[1], 'base64').toString('utf8')) as { ports: { name: string; kind: string; detach: boolean }[] })
    .ports;
}

const setup = onFirstUse(() => createTwoVlanPools(world));

describe('4-port servers', () => {
  test('hybrid: eth3 leaves bond1 with its VLAN; bond0, eth0, eth1 and eth2 stay bonded in layer 3', async () => {
    await setup();
    await createTemplate(world, 'eth3-out', [
      { name: 'eth3', bonded: false, vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] },
    ]);
    await createMachine(world, 'hy4-0', 'eth3-out', { machineType: FOUR_PORT_PLAN });
    const mn = await waitMachineNetworkReady(world, 'hy4-0');
    expect(mn.status.networkType).toBe('hybrid');
    const { ports, userdata } = await devicePortViews(world, await deviceIdOfMachine(world, 'hy4-0'));
    expect(ports.map((p) => [p.name, p.bonded, p.vxlans])).toEqual([
      ['bond0', true, []],
      ['bond1', true, []],
      ['eth0', true, []],
      ['eth1', true, []],
      ['eth2', true, []],
      ['eth3', false, [1000]],
    ]);
    expect(bootPorts(userdata)).toEqual([{ name: 'eth3', kind: 'nic', detach: true }]);
  });

  test('bond1 disbonded in layer 2 beside a layer-3 bond0: eth1 and eth3 follow bond1 out of the OS bond', async () => {
    await setup();
    await createTemplate(world, 'bond1-individual', [
      { name: 'bond1', layer2: true, bonded: false },
      { name: 'eth1', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] },
      { name: 'eth3', vlans: [{ vxlan: 1001, addressesFromPools: [poolRef('vlan-1001')] }] },
    ]);
    await createMachine(world, 'b1i-0', 'bond1-individual', { machineType: FOUR_PORT_PLAN });
    const mn = await waitMachineNetworkReady(world, 'b1i-0');
    // bond0 keeps layer 3 (and the metadata service): the boot script was not waited for.
    expect(mn.status.networkType).toBe('hybrid');
    const { ports, userdata } = await devicePortViews(world, await deviceIdOfMachine(world, 'b1i-0'));
    const byName = new Map(ports.map((p) => [p.name, p]));
    expect(byName.get('bond0')).toMatchObject({ bonded: true, networkType: 'layer3' });
    expect(byName.get('eth0')?.bonded).toBe(true);
    expect(byName.get('eth2')?.bonded).toBe(true);
    expect(byName.get('bond1')?.bonded).toBe(false);
    expect(byName.get('eth1')).toMatchObject({ bonded: false, vxlans: [1000] });
    expect(byName.get('eth3')).toMatchObject({ bonded: false, vxlans: [1001] });
    expect(bootPorts(userdata)).toEqual([
      { name: 'bond1', kind: 'bond', detach: true },
      { name: 'eth1', kind: 'nic', detach: true },
      { name: 'eth3', kind: 'nic', detach: true },
    ]);
  });

  test('layer2-individual: both bonds disbonded in layer 2, each of the four ports with its VLAN', async () => {
    await setup();
    await createTemplate(world, 'l2i-4', [
      { name: 'bond0', layer2: true, bonded: false },
      { name: 'bond1', layer2: true, bonded: false },
      { name: 'eth0', vlans: [{ vxlan: 1000, addressesFromPools: [poolRef('vlan-1000')] }] },
      { name: 'eth1', vlans: [{ vxlan: 1001, addressesFromPools: [poolRef('vlan-1001')] }] },
      { name: 'eth2', vlans: [{ vxlan: 1000 }] },
      { name: 'eth3', vlans: [{ vxlan: 1001 }] },
    ]);
    await createMachine(world, 'l2i4-0', 'l2i-4', { machineType: FOUR_PORT_PLAN });
    await playBootScript(world, 'l2i4-0');
    const mn = await waitMachineNetworkReady(world, 'l2i4-0');
    expect(mn.status.networkType).toBe('layer2-individual');
    const { ports, userdata } = await devicePortViews(world, await deviceIdOfMachine(world, 'l2i4-0'));
    expect(ports.filter((p) => p.name.startsWith('eth')).map((p) => [p.name, p.bonded, p.vxlans])).toEqual([
      ['eth0', false, [1000]],
      ['eth1', false, [1001]],
      ['eth2', false, [1000]],
      ['eth3', false, [1001]],
    ]);
    expect(bootPorts(userdata).every((p) => p.detach)).toBe(true);
  });

  test('bond0 in layer 2 beside bond1 in layer 3 is hybrid, and still waits for the boot script before bond0 loses layer 3', async () => {
    await setup();
    await createTemplate(world, 'bond0-l2', [
      {
        name: 'bond0',
        layer2: true,
        vlans: [
          { vxlan: 1000, native: true, addressesFromPools: [poolRef('vlan-1000')] },
          { vxlan: 1001, addressesFromPools: [poolRef('vlan-1001')] },
        ],
      },
      { name: 'bond1' },
    ]);
    await createMachine(world, 'b0l2-0', 'bond0-l2', { machineType: FOUR_PORT_PLAN });
    await playBootScript(world, 'b0l2-0');
    const mn = await waitMachineNetworkReady(world, 'b0l2-0');
    expect(mn.status.networkType).toBe('hybrid');
    const { ports } = await devicePortViews(world, await deviceIdOfMachine(world, 'b0l2-0'));
    expect(ports.find((p) => p.name === 'bond0')).toMatchObject({ bonded: true, vxlans: [1000, 1001] });
    expect(ports.find((p) => p.name === 'bond1')).toMatchObject({ bonded: true, vxlans: [] });
  });

  test('a 2-port template asking eth1 out of bond0 is refused on a 4-port server, where eth1 is the first port of bond1', async () => {
    await setup();
    await createTemplate(world, 'eth1-out', [{ name: 'eth1', bonded: false, vlans: [{ vxlan: 1000 }] }]);
    await createMachine(world, 'e1-0', 'eth1-out', { machineType: FOUR_PORT_PLAN });
    const refused = await waitFor(
      'the port plan refused',
      async () => {
        const ports = condition(await machineNetwork(world, 'e1-0'), 'PortsConfigured');
        return ports?.reason === 'InvalidPortPlan' ? ports : false;
      },
      { timeoutMs: 60_000 },
    );
    expect(refused.message).toContain('eth1 is the first port of bond1');
  });
});
