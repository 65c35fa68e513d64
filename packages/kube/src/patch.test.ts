import { describe, expect, test } from '@jest/globals';
import { createMergePatch, jsonEqual, objectPatch, PatchHelper, statusPatch } from './patch.js';
import type { KubeObject } from './resource.js';

interface Pool extends KubeObject {
  spec: { addresses: string[]; prefix: number; gateway?: string };
  status?: { allocations?: Record<string, string>; conditions?: { type: string; status: string }[] };
}

const pool: Pool = {
  apiVersion: 'ipam.metal.x-k8s.io/v1alpha1',
  kind: 'InClusterIPPool',
  metadata: { namespace: 'ns', name: 'p', resourceVersion: '42', generation: 2, uid: 'u1', labels: { a: '1' }, finalizers: ['x'] },
  spec: { addresses: ['10.0.0.0/24'], prefix: 24, gateway: '10.0.0.1' },
  status: { allocations: { c1: '10.0.0.2' } },
};

describe('createMergePatch', () => {
  test.each<[string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown> | undefined]>([
    ['equal objects give no patch', { a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }, undefined],
    ['a changed scalar', { a: 1 }, { a: 2 }, { a: 2 }],
    ['a removed key becomes null', { a: 1, b: 2 }, { a: 1 }, { b: null }],
    ['an undefined value counts as removed', { a: 1, b: 2 }, { a: 1, b: undefined }, { b: null }],
    ['nested objects are diffed key by key', { s: { x: 1, y: 2 } }, { s: { x: 1, y: 3 } }, { s: { y: 3 } }],
    ['arrays are replaced whole', { l: [1, 2, 3] }, { l: [1, 2] }, { l: [1, 2] }],
    ['an object replacing a scalar is sent whole', { a: 1 }, { a: { b: 1 } }, { a: { b: 1 } }],
    ['a new nested object is sent whole', {}, { s: { x: 1 } }, { s: { x: 1 } }],
  ])('%s', (_name, before, after, want) => {
    expect(createMergePatch(before, after)).toEqual(want);
  });

  test('the patch does not alias the new object', () => {
    const after = { l: [1] };
    const patch = createMergePatch({}, after);
    after.l.push(2);
    expect(patch).toEqual({ l: [1] });
  });
});

describe('object and status patches', () => {
  test('status changes do not appear in the object patch and vice versa', () => {
    const after = structuredClone(pool);
    after.status = { allocations: { c1: '10.0.0.2', c2: '10.0.0.3' } };
    after.metadata.finalizers = [];
    expect(objectPatch(pool, after)).toEqual({ metadata: { finalizers: [] } });
    expect(statusPatch(pool, after)).toEqual({ status: { allocations: { c2: '10.0.0.3' } } });
  });

  test('server-managed metadata never lands in a patch', () => {
    const after = structuredClone(pool);
    after.metadata.resourceVersion = '43';
    after.metadata.generation = 3;
    after.metadata.managedFields = [];
    expect(objectPatch(pool, after)).toBeUndefined();
  });

  test('a status set for the first time is sent whole', () => {
    const { status: _s, ...noStatus } = pool;
    const after: Pool = { ...structuredClone(noStatus), status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    expect(statusPatch(noStatus, after)).toEqual({ status: { conditions: [{ type: 'Ready', status: 'True' }] } });
  });

  test('PatchHelper reports nothing when nothing changed, even if the object is edited in place later', () => {
    const obj = structuredClone(pool);
    const helper = PatchHelper.snapshot({ group: 'g', version: 'v', kind: 'InClusterIPPool', plural: 'p', namespaced: true }, obj);
    expect(helper.changes(obj)).toEqual({ object: undefined, status: undefined });
    obj.spec.addresses.push('10.0.1.0/24');
    expect(helper.changes(obj).object).toEqual({ spec: { addresses: ['10.0.0.0/24', '10.0.1.0/24'] } });
  });
});

test('jsonEqual ignores key order and undefined values', () => {
  expect(jsonEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
  expect(jsonEqual([1, { x: 1 }], [1, { x: 1 }])).toBe(true);
  expect(jsonEqual([1, 2], [2, 1])).toBe(false);
  expect(jsonEqual({ a: 1 }, { a: '1' })).toBe(false);
});
