import type { MachineNetworkSpec, NetworkMode, Port } from '@metal-l2/api';
import { deriveNetworkType, type DesiredPort, type PortShape } from '@metal-l2/metal-api';

/** The spec's ports as the Metal planner takes them: VLANs by vxlan, the native one named. */
export function desiredPorts(spec: Pick<MachineNetworkSpec, 'ports'>): DesiredPort[] {
  return spec.ports.map((port) => {
    const vlans = (port.vlans ?? []).map((v) => v.vxlan);
    const native = (port.vlans ?? []).find((v) => v.native === true)?.vxlan;
    return {
      name: port.name,
      ...(port.bonded === undefined ? {} : { bonded: port.bonded }),
      ...(port.name.startsWith('bond') ? { layer2: port.layer2 ?? false } : {}),
      vlans,
      ...(native === undefined ? {} : { nativeVlan: native }),
    };
  });
}

const isBond = (name: string): boolean => name.startsWith('bond');

/**
 * The network type the spec asks for, named the way the Metal API names it. Ports the spec does
 * not list take the defaults of a 2-port server (bond0 over eth0 and eth1), which every plan has.
 */
export function desiredNetworkMode(spec: Pick<MachineNetworkSpec, 'ports'>): NetworkMode | undefined {
  const byName = new Map<string, Port>(spec.ports.map((p) => [p.name, p]));
  const names = new Set(['bond0', 'eth0', 'eth1', ...byName.keys()]);
  const bondOf = (name: string): Port | undefined =>
    byName.get(name === 'eth1' && names.has('bond1') && names.has('eth3') ? 'bond1' : 'bond0');
  const shapes: PortShape[] = [...names].map((name) => {
    const port = byName.get(name);
    const vlanCount = port?.vlans?.length ?? 0;
    if (isBond(name)) return { isBond: true, bonded: port?.bonded ?? true, layer2: port?.layer2 ?? false, vlanCount };
    const bond = bondOf(name);
    return { isBond: false, bonded: port?.bonded ?? bond?.bonded ?? true, layer2: false, vlanCount };
  });
  return deriveNetworkType(shapes);
}

/** Modes in which bond0 loses layer 3, so the metadata service goes away with it. */
export function removesLayer3(mode: NetworkMode | undefined): boolean {
  return mode === 'layer2-bonded' || mode === 'layer2-individual';
}
