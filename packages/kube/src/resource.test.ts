import { describe, expect, test } from '@jest/globals';
import { apiVersionOf, builtinTypes, keyOf, keyString, parseKey } from './resource.js';
import { collectionPath, objectPath } from './client/paths.js';

describe('keys', () => {
  test.each([
    [{ namespace: 'ns', name: 'a' }, 'ns/a'],
    [{ name: 'global' }, 'global'],
  ])('%p ⇄ %s', (key, text) => {
    expect(keyString(key)).toBe(text);
    expect(parseKey(text)).toEqual(key);
  });

  test('keyOf reads metadata and refuses nameless objects', () => {
    expect(keyOf({ metadata: { namespace: 'ns', name: 'a' } })).toEqual({ namespace: 'ns', name: 'a' });
    expect(keyOf({ metadata: { name: 'a', namespace: '' } })).toEqual({ name: 'a' });
    expect(() => keyOf({ metadata: { generateName: 'x-' } as { name?: string } })).toThrow('no metadata.name');
  });
});

describe('paths', () => {
  const claims = {
    group: 'ipam.cluster.x-k8s.io',
    version: 'v1beta2',
    kind: 'IPAddressClaim',
    plural: 'ipaddressclaims',
    namespaced: true,
  };
  test.each([
    ['namespaced collection', collectionPath(claims, 'ns'), '/apis/ipam.cluster.x-k8s.io/v1beta2/namespaces/ns/ipaddressclaims'],
    ['all namespaces', collectionPath(claims, undefined), '/apis/ipam.cluster.x-k8s.io/v1beta2/ipaddressclaims'],
    [
      'status subresource',
      objectPath(claims, { namespace: 'ns', name: 'c' }, 'status'),
      '/apis/ipam.cluster.x-k8s.io/v1beta2/namespaces/ns/ipaddressclaims/c/status',
    ],
    ['core kinds live under /api', objectPath(builtinTypes.secret, { namespace: 'ns', name: 's' }), '/api/v1/namespaces/ns/secrets/s'],
    ['cluster-scoped kinds ignore namespaces', collectionPath(builtinTypes.namespace, 'ignored'), '/api/v1/namespaces'],
  ])('%s', (_name, got, want) => {
    expect(got).toBe(want);
  });

  test('a namespaced object without a namespace is refused before any request', () => {
    expect(() => objectPath(claims, { name: 'c' })).toThrow('IPAddressClaim is namespaced');
  });

  test('apiVersionOf', () => {
    expect(apiVersionOf(builtinTypes.lease)).toBe('coordination.k8s.io/v1');
    expect(apiVersionOf(builtinTypes.event)).toBe('v1');
  });
});
