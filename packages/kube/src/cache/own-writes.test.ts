import { describe, expect, test } from '@jest/globals';
import type { KubeObject } from '../resource.js';
import { OwnWrites } from './own-writes.js';

const obj = (rv: string, uid = 'u1'): KubeObject => ({
  apiVersion: 'network.metal.x-k8s.io/v1alpha1',
  kind: 'MachineNetwork',
  metadata: { name: 'm', namespace: 'n', uid, resourceVersion: rv },
});

/** Remembers each written version in turn, the first based on `base`, as a patch of metadata then status does. */
function wrote(own: OwnWrites<KubeObject>, base: string, written: readonly KubeObject[]): void {
  let basedOn: string | undefined = base;
  for (const w of written) {
    own.remember('n/m', '', { basedOn, written: w });
    basedOn = w.metadata.resourceVersion;
  }
}

describe('OwnWrites', () => {
  test('a cache still at the version our write was based on is replaced by what we wrote', () => {
    const own = new OwnWrites<KubeObject>();
    wrote(own, '5', [obj('6')]);
    expect(own.fresher('n/m', '', obj('5'))?.metadata.resourceVersion).toBe('6');
  });

  test('the version between our metadata and status patches is replaced too', () => {
    const own = new OwnWrites<KubeObject>();
    wrote(own, '5', [obj('6'), obj('7')]);
    expect(own.fresher('n/m', '', obj('6'))?.metadata.resourceVersion).toBe('7');
  });

  test('any other cached version wins and the memory is dropped', () => {
    const own = new OwnWrites<KubeObject>();
    wrote(own, '5', [obj('6')]);
    expect(own.fresher('n/m', '', obj('7'))?.metadata.resourceVersion).toBe('7');
    expect(own.fresher('n/m', '', obj('5'))?.metadata.resourceVersion).toBe('5');
  });

  test('a recreated object (another uid) is never replaced', () => {
    const own = new OwnWrites<KubeObject>();
    wrote(own, '5', [obj('6')]);
    expect(own.fresher('n/m', '', obj('5', 'u2'))?.metadata.uid).toBe('u2');
  });

  test('a create the cache has not shown yet is ours until it has', () => {
    const own = new OwnWrites<KubeObject>();
    own.remember('pool', 'b', { basedOn: undefined, written: obj('3') });
    expect(own.unseen('pool', new Set())).toHaveLength(1);
    expect(own.fresher('pool', 'b', undefined)?.metadata.resourceVersion).toBe('3');
    expect(own.fresher('pool', 'b', obj('3'))?.metadata.resourceVersion).toBe('3');
    expect(own.fresher('pool', 'b', undefined)).toBeUndefined();
  });
});
