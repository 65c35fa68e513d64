import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testKubeconfigPath } from '@metal-l2/test-support/cluster';
import { timeouts } from '@metal-l2/test-support/timeouts';
import { waitFor } from '@metal-l2/test-support/wait-for';
import { PROJECT_ID, METRO, netKinds, type NetworkWorld } from './network-world.js';

// What a test reads to judge the network controller from outside: the device as the simulator
// holds it, the pool's usage, and the real kubectl a user would run.

/** The vxlans on one port of a device, sorted; undefined when the device cannot be read (gone). */
export async function vxlansOf(world: NetworkWorld, deviceId: string, port: string): Promise<number[] | undefined> {
  try {
    const device = await world.metal.devices.get(deviceId, { include: ['network_ports.virtual_networks'] });
    const found = (device.network_ports ?? []).find((p) => p.name === port);
    return (found?.virtual_networks ?? []).map((v) => ('vxlan' in v ? (v.vxlan ?? 0) : 0)).sort((a, b) => a - b);
  } catch {
    return undefined;
  }
}

/** One port of a device as a test judges it: its mode, whether it is bonded, its VLANs (sorted) and its native VLAN. */
export interface PortView {
  name: string;
  networkType?: string;
  bonded: boolean;
  vxlans: number[];
  native?: number;
}

/** A device's ports as the simulator holds them, bond0's network type, and the user data the device was created with. */
export async function devicePortViews(
  world: NetworkWorld,
  deviceId: string,
): Promise<{ networkType: string | undefined; ports: PortView[]; userdata: string }> {
  const device = await world.metal.devices.get(deviceId, {
    include: ['network_ports.virtual_networks', 'network_ports.native_virtual_network'],
  });
  const ports = (device.network_ports ?? []).map((p) => ({
    name: p.name ?? '',
    ...(p.network_type === undefined ? {} : { networkType: p.network_type }),
    bonded: p.data?.bonded ?? false,
    vxlans: (p.virtual_networks ?? []).map((v) => ('vxlan' in v ? (v.vxlan ?? 0) : 0)).sort((a, b) => a - b),
    ...(p.native_virtual_network !== undefined && 'vxlan' in p.native_virtual_network && p.native_virtual_network.vxlan !== undefined
      ? { native: p.native_virtual_network.vxlan }
      : {}),
  }));
  const bond0 = ports.find((p) => p.name === 'bond0');
  return { networkType: bond0?.networkType, ports, userdata: device.userdata ?? '' };
}

/** The id of a port of a device, and of a project VLAN by vxlan: what a hand-made change needs. */
export async function portAndVlan(
  world: NetworkWorld,
  deviceId: string,
  port: string,
  vxlan: number,
): Promise<{ portId: string; vlanId: string }> {
  const device = await world.metal.devices.get(deviceId, { include: ['network_ports'] });
  const portId = (device.network_ports ?? []).find((p) => p.name === port)?.id;
  const vlanId = (await world.metal.virtualNetworks.list(PROJECT_ID, { metro: METRO })).find((v) => v.vxlan === vxlan)?.id;
  if (portId === undefined || vlanId === undefined) throw new Error(`no port ${port} on ${deviceId} or no VLAN ${vxlan}`);
  return { portId, vlanId };
}

export async function poolUsed(world: NetworkWorld, name: string): Promise<number | undefined> {
  const pool = await world.objects.get(netKinds.pool, name, world.ns);
  return pool?.status?.ipAddresses?.used as number | undefined;
}

/**
 * The pool's used count reaches `expected`. Waited for, not read once: the IPAM provider writes a
 * pool's counts at most once a second (the blocks hold the truth at once), so the count may lag a
 * bound claim by that second plus one pass (docs/ipam-provider.md).
 */
export async function waitPoolUsed(world: NetworkWorld, name: string, expected: number): Promise<void> {
  await waitFor(`pool ${name} counting ${expected} used`, async () => (await poolUsed(world, name)) === expected, {
    timeoutMs: timeouts.watchEvent,
  });
}

/** Runs the control plane's real kubectl against the test cluster (its defaults: --wait, background cascade). */
export async function kubectl(args: readonly string[], timeoutMs = 60_000): Promise<{ stdout: string; stderr: string }> {
  const bin = join(process.env['METAL_L2_TEST_BIN_DIR'] ?? '', 'kubectl');
  return promisify(execFile)(bin, ['--kubeconfig', testKubeconfigPath(), ...args], { timeout: timeoutMs });
}

/**
 * Event lines the network controller logged (the test world's event sink logs each Event as
 * "event <message>" with its type and reason) with this reason for this object.
 */
export function loggedEvents(world: NetworkWorld, reason: string, name: string): string[] {
  return world.logLines.filter(
    (l) => l.includes('"msg":"event ') && l.includes(`"reason":"${reason}"`) && l.includes(`"object":"${name}"`),
  );
}

/** kubectl in the world's namespace, as a user runs it there; its stdout. No timeout of its own: the test's bounds it. */
export async function kubectlInNamespace(world: NetworkWorld, ...args: string[]): Promise<string> {
  return (await kubectl(['--namespace', world.ns, ...args], 0)).stdout;
}

/**
 * The Events the controller emitted for an object, as its event sink received them (the world
 * logs them, one JSON line each, where a deployment's recorder posts them to the API server).
 */
export function eventsOf(world: NetworkWorld, name: string): { kind?: string; reason?: string; message?: string; type?: string }[] {
  return (
    world.logLines
      .flatMap((chunk) => chunk.split('\n'))
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; object?: string; kind?: string; reason?: string; type?: string })
      // The logger folds the Event's message into msg: "event <message>".
      .filter((line) => line.msg?.startsWith('event ') === true && line.object === name)
      .map((line) => ({ ...line, message: (line.msg ?? '').slice('event '.length) }))
  );
}

/**
 * The Events a deployment's recorder would show for these emissions: one per object kind, type,
 * reason and message (a repeat, as when a step runs again after a conflict, only raises the
 * Event's count, as `kubectl describe` shows "x2"). Each with how many times it was emitted.
 */
export function eventSeries<E extends { kind?: string; reason?: string; message?: string; type?: string }>(
  events: readonly E[],
): (E & { count: number })[] {
  const series = new Map<string, E & { count: number }>();
  for (const e of events) {
    const key = JSON.stringify([e.kind, e.type, e.reason, e.message]);
    const known = series.get(key);
    if (known === undefined) series.set(key, { ...e, count: 1 });
    else known.count += 1;
  }
  return [...series.values()];
}
