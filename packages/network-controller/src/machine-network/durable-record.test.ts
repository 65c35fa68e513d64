import { describe, expect, test } from '@jest/globals';
import { NetworkAnnotations, type MachineNetwork } from '@metal-l2/api';
import { objectPatch } from '@metal-l2/kube';
import { keepRecord, restoreRecord } from './durable-record.js';

const base = (): MachineNetwork => ({
  apiVersion: 'network.metal.x-k8s.io/v1alpha1',
  kind: 'MachineNetwork',
  metadata: { name: 'm', namespace: 'n', generation: 1 },
  spec: { templateName: 't', ports: [{ name: 'bond0', vlans: [{ vxlan: 1000 }] }] },
});
const assigned = [{ portID: 'p1', port: 'bond0', vxlan: 1000, vlanID: 'v1' }];

describe('durable record', () => {
  test('what status held survives a copy without status (clusterctl move)', () => {
    const mn = base();
    mn.status = {
      deviceID: 'd1',
      assignedVlans: assigned,
      conditions: [
        { type: 'PortsConfigured', status: 'True', reason: 'PortsConfigured', message: '', lastTransitionTime: '2026-12-01T09:00:00Z' },
      ],
    };
    keepRecord(mn);
    const moved: MachineNetwork = { ...base(), metadata: { ...base().metadata, annotations: mn.metadata.annotations ?? {} } };
    restoreRecord(moved);
    expect(moved.status?.assignedVlans).toEqual(assigned);
    expect(moved.status?.deviceID).toBe('d1');
    // PortsConfigured is not taken from the record: the device is read once to say it.
    expect(moved.status?.conditions).toBeUndefined();
  });

  test('an empty assignment list removes the annotation', () => {
    const mn: MachineNetwork = {
      ...base(),
      metadata: { ...base().metadata, annotations: { [NetworkAnnotations.assignedVlans]: JSON.stringify(assigned) } },
      status: { assignedVlans: [] },
    };
    keepRecord(mn);
    expect(mn.metadata.annotations?.[NetworkAnnotations.assignedVlans]).toBeUndefined();
  });

  test('a MachineNetwork without annotations and nothing to record gets no metadata patch', () => {
    // The API server returns no annotations when there are none: an empty map kept here would
    // differ from it, and every write would send a metadata patch that changes nothing.
    const mn: MachineNetwork = { ...base(), metadata: { ...base().metadata, resourceVersion: '7' }, status: {} };
    const before = structuredClone(mn);
    keepRecord(mn);
    expect(objectPatch(before, mn)).toBeUndefined();
    mn.status = { deviceID: 'd1', assignedVlans: assigned };
    keepRecord(mn);
    expect(objectPatch(before, mn)).toEqual({
      metadata: { annotations: { [NetworkAnnotations.assignedVlans]: JSON.stringify(assigned) } },
    });
  });
});
