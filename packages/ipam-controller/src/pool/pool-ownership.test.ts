import { describe, expect, test } from '@jest/globals';
import type { IPAddress, IPPool } from '@metal-l2/api';
import { hasLostStatus, movedOutCondition, poolOwnership, stampPatch } from './pool-ownership.js';

const STAMP = 'ipam.metal.x-k8s.io/allocating-cluster';
const global = { kind: 'GlobalInClusterIPPool', name: 'g' } as const;
const namespaced = { kind: 'InClusterIPPool', name: 'p', namespace: 'ns' } as const;

/** `status` null: the pool has none (new, or restored without it). */
function pool(stamp: string | undefined, status: IPPool['status'] | null = { blocks: { size: 1024, namespace: 'ns' } }): IPPool {
  return {
    apiVersion: 'ipam.metal.x-k8s.io/v1alpha1',
    kind: 'GlobalInClusterIPPool',
    metadata: { name: 'g', ...(stamp === undefined ? {} : { annotations: { [STAMP]: stamp } }) },
    spec: { addresses: ['10.0.0.0/24'], prefix: 24 },
    ...(status === null ? {} : { status }),
  };
}

describe('whose a pool is', () => {
  test('a global pool stamped by another management cluster is a copy; a namespaced one is restamped', () => {
    expect(poolOwnership(global, pool('a'), 'a')).toEqual({ kind: 'ours' });
    expect(poolOwnership(global, pool('b'), 'a')).toEqual({ kind: 'copied', from: 'b' });
    expect(poolOwnership(global, pool(undefined), 'a')).toEqual({ kind: 'to-stamp' });
    expect(poolOwnership(namespaced, pool('b'), 'a')).toEqual({ kind: 'to-stamp' });
    expect(stampPatch(namespaced, pool('b'), 'a')).toEqual({ [STAMP]: 'a' });
    expect(stampPatch(global, pool('b'), 'a')).toBeUndefined();
  });

  test('stamped only once the layout is recorded, so a stamp without a layout means a lost status', () => {
    expect(stampPatch(global, pool(undefined, null), 'a')).toBeUndefined();
    expect(stampPatch(global, pool(undefined), 'a')).toEqual({ [STAMP]: 'a' });
    expect(hasLostStatus(pool('a', null))).toBe(true);
    expect(hasLostStatus(pool('a'))).toBe(false);
    // A new pool, and a pool written before blocks (its allocations in status), lost nothing.
    expect(hasLostStatus(pool(undefined, null))).toBe(false);
    expect(hasLostStatus(pool('a', { allocations: { '10.0.0.1': 'c' } }))).toBe(false);
  });

  test('AddressesMovedOut names the claims that left and how to give an address back', () => {
    const left = ['c', 'a', 'b', 'd', 'e', 'f'].map((name, i): IPAddress => ({
      metadata: { name, namespace: 'ns' },
      spec: {
        address: `10.0.0.${i + 1}`,
        prefix: 24,
        claimRef: { name },
        poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'GlobalInClusterIPPool', name: 'g' },
      },
    }));
    expect(movedOutCondition([])).toBeUndefined();
    const condition = movedOutCondition(left);
    expect(condition).toMatchObject({ type: 'AddressesMovedOut', status: 'True', reason: 'ClaimsLeftWithoutRelease' });
    expect(condition?.message).toContain('6 addresses stay allocated');
    expect(condition?.message).toContain('ns/a (10.0.0.2), ns/b (10.0.0.3), ns/c (10.0.0.1), ns/d (10.0.0.4), ns/e (10.0.0.5) and 1 more');
    expect(condition?.message).toContain('kubectl delete ipaddress -n ns a');
  });
});
