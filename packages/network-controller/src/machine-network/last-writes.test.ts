import { describe, expect, test } from '@jest/globals';
import type { MachineNetwork } from '@metal-l2/api';
import { LastWrites } from './last-writes.js';

const mn = (rv: string, uid = 'u1'): MachineNetwork => ({
  apiVersion: 'network.metal.x-k8s.io/v1alpha1',
  kind: 'MachineNetwork',
  metadata: { name: 'm', namespace: 'n', uid, resourceVersion: rv },
  spec: { templateName: 't', ports: [{ name: 'bond0' }] },
});

describe('LastWrites', () => {
  test('a cache still at the version our write was based on is replaced by what we wrote', () => {
    const writes = new LastWrites();
    writes.remember('n/m', mn('5'), [mn('6')]);
    expect(writes.view('n/m', mn('5'))?.metadata.resourceVersion).toBe('6');
  });

  test('the version between our metadata and status patches is replaced too', () => {
    const writes = new LastWrites();
    writes.remember('n/m', mn('5'), [mn('6'), mn('7')]);
    expect(writes.view('n/m', mn('6'))?.metadata.resourceVersion).toBe('7');
  });

  test('any other cached version wins and the memory is dropped', () => {
    const writes = new LastWrites();
    writes.remember('n/m', mn('5'), [mn('6')]);
    expect(writes.view('n/m', mn('7'))?.metadata.resourceVersion).toBe('7');
    expect(writes.view('n/m', mn('5'))?.metadata.resourceVersion).toBe('5');
  });

  test('a recreated object (another uid) is never replaced', () => {
    const writes = new LastWrites();
    writes.remember('n/m', mn('5'), [mn('6')]);
    expect(writes.view('n/m', mn('5', 'u2'))?.metadata.uid).toBe('u2');
  });
});
