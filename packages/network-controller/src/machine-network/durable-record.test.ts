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

describe('durable record of what the device booted with', () => {
  const userData = {
    secretName: 'm-bootstrap',
    hash: 'a'.repeat(64),
    rendererVersion: 1,
    fingerprint: 'b'.repeat(64),
    announcedEndpoint: { address: '192.168.10.250', prefix: 24, port: 6443, vxlan: 1000, virtualRouterID: 77 },
  };

  test('a checked record survives a copy without status (clusterctl move, a restore)', () => {
    const mn: MachineNetwork = { ...base(), status: { userData } };
    keepRecord(mn);
    const moved: MachineNetwork = { ...base(), metadata: { ...base().metadata, annotations: mn.metadata.annotations ?? {} } };
    restoreRecord(moved);
    expect(moved.status?.userData).toEqual(userData);
  });

  test('the same record gives the same text whatever the order of its keys (as the API server returns them, sorted)', () => {
    const ours: MachineNetwork = { ...base(), status: { userData } };
    const sorted = Object.fromEntries(Object.entries(userData).sort(([a], [b]) => a.localeCompare(b)));
    const readBack: MachineNetwork = { ...base(), status: { userData: sorted } };
    keepRecord(ours);
    keepRecord(readBack);
    expect(readBack.metadata.annotations).toEqual(ours.metadata.annotations);
  });

  test.each([
    { name: 'a record without a fingerprint (not checked yet) is not kept', status: { userData: { hash: 'a'.repeat(64) } }, kept: false },
    { name: 'a checked record is kept', status: { userData }, kept: true },
  ])('$name', ({ status, kept }) => {
    const mn: MachineNetwork = { ...base(), status };
    keepRecord(mn);
    expect(mn.metadata.annotations?.[NetworkAnnotations.injectedConfig] !== undefined).toBe(kept);
  });

  test.each([
    { name: 'not JSON', text: '{' },
    { name: 'no fingerprint', text: JSON.stringify({ hash: 'a'.repeat(64) }) },
    {
      name: 'an endpoint without a port',
      text: JSON.stringify({ ...userData, announcedEndpoint: { address: '192.168.10.250', prefix: 24 } }),
    },
  ])('a record that cannot be read ($name) is not trusted', ({ text }) => {
    const mn: MachineNetwork = { ...base(), metadata: { ...base().metadata, annotations: { [NetworkAnnotations.injectedConfig]: text } } };
    restoreRecord(mn);
    expect(mn.status?.userData).toBeUndefined();
  });

  test('status that has a record keeps it: the annotation does not overwrite it', () => {
    const mn: MachineNetwork = {
      ...base(),
      metadata: { ...base().metadata, annotations: { [NetworkAnnotations.injectedConfig]: JSON.stringify(userData) } },
      status: { userData: { secretName: 'm-bootstrap', hash: 'c'.repeat(64) } },
    };
    restoreRecord(mn);
    expect(mn.status?.userData).toEqual({ secretName: 'm-bootstrap', hash: 'c'.repeat(64) });
  });
});
