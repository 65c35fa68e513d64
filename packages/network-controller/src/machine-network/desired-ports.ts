import type { MachineNetworkSpec, NetworkMode } from '@metal-l2/api';
import type { DesiredPort, PortCount } from '@metal-l2/metal-api';
import { resolvePorts } from '../port-rules.js';

/** The spec's ports as the Metal planner takes them (see port-rules). */
export function desiredPorts(spec: Pick<MachineNetworkSpec, 'ports'>): DesiredPort[] {
  return [...resolvePorts(spec.ports).desired];
}

/**
 * The network type the spec asks for, named the way the Metal API names it, on a server of
 * `portCount` ports when known, else of the family the spec's port names imply.
 */
export function desiredNetworkMode(spec: Pick<MachineNetworkSpec, 'ports'>, portCount?: PortCount): NetworkMode | undefined {
  return resolvePorts(spec.ports, portCount).mode;
}

/**
 * Whether the spec takes bond0 to layer 2, so the metadata service goes away with it: the layer2-*
 * modes, and a 4-port hybrid with bond0 (not bond1) in layer 2, which the mode alone does not tell.
 */
export function removesLayer3(spec: Pick<MachineNetworkSpec, 'ports'>): boolean {
  return resolvePorts(spec.ports).removesLayer3;
}
