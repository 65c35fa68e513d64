import type { Port, VlanAssignmentBatch } from '../models.js';
import type { SimulatorStore } from '../store.js';
import type { BatchWire, PortVlanAssignmentWire } from '../wire.js';
import { link } from './common.js';
import { renderPort } from './port.js';

export function renderBatch(store: SimulatorStore, b: VlanAssignmentBatch, include: ReadonlySet<string>): BatchWire {
  const port = store.ports.get(b.portId);
  return {
    id: b.id,
    state: b.state,
    quantity: b.items.length,
    error_messages: [...b.errorMessages],
    created_at: b.createdAt,
    updated_at: b.updatedAt,
    vlan_assignments: b.items.map((i) => ({ id: i.id, vlan: i.vxlan, state: i.state, native: i.native })),
    port: include.has('port') && port !== undefined ? renderPort(store, port, new Set()) : link('ports', b.portId),
    project: link('projects', b.projectId),
  };
}

/**
 * A port's current assignments. A VLAN an open batch is removing shows `unassigning`, the state the
 * spec's PortVlanAssignment lists for that window.
 */
export function renderPortAssignments(store: SimulatorStore, port: Port): PortVlanAssignmentWire[] {
  const leaving = new Set(
    store
      .openBatches({ portId: port.id })
      .filter((b) => b.state === 'in_progress')
      .flatMap((b) => b.items.filter((i) => i.state === 'unassigned').map((i) => i.vlanId)),
  );
  return port.vlans.map((a) => ({
    id: a.id,
    vlan: store.vlanOf(a.vlanId).vxlan,
    native: port.nativeVlanId === a.vlanId,
    state: leaving.has(a.vlanId) ? 'unassigning' : 'assigned',
    created_at: a.createdAt,
    updated_at: a.createdAt,
    port: link('ports', port.id),
    virtual_network: link('virtual-networks', a.vlanId),
  }));
}
