import { describe, expect, test } from '@jest/globals';
import type { IPPool } from '@metal-l2/api';
import type { AdmissionRequest } from '@metal-l2/kube';
import { listPools, poolAdmissionHandler } from './pool-webhook.js';

function pool(name: string, addresses: string[]): IPPool {
  return {
    apiVersion: 'ipam.metal.x-k8s.io/v1alpha1',
    kind: 'InClusterIPPool',
    metadata: { name, namespace: 'ns' },
    spec: { addresses, prefix: 24 },
  };
}

/** A pool cache as the webhook reads it: synced or not yet. */
function cache(
  pools: IPPool[],
  synced: boolean,
): { get: () => undefined; byIndex: () => IPPool[]; list: () => IPPool[]; hasSynced: () => boolean } {
  return { get: () => undefined, byIndex: () => [], list: () => pools, hasSynced: () => synced };
}

const create = (obj: IPPool): AdmissionRequest => ({
  uid: 'u',
  operation: 'CREATE',
  kind: { group: 'ipam.metal.x-k8s.io', version: 'v1alpha1', kind: 'InClusterIPPool' },
  object: obj,
});

describe('the pool webhook and its cache', () => {
  test('refuses creates and spec updates until both pool caches have synced', async () => {
    const handler = poolAdmissionHandler('InClusterIPPool', {
      listAll: listPools({ InClusterIPPool: cache([], false), GlobalInClusterIPPool: cache([], true) }),
    });
    const verdict = await handler(create(pool('p', ['10.0.0.1'])));
    expect(verdict).toMatchObject({ allowed: false, message: expect.stringContaining('has not read the existing pools yet') });
  });

  test('once synced, compares against the cached pools of both kinds', async () => {
    const handler = poolAdmissionHandler('InClusterIPPool', {
      listAll: listPools({ InClusterIPPool: cache([pool('other', ['10.0.0.1-10.0.0.5'])], true), GlobalInClusterIPPool: cache([], true) }),
    });
    expect(await handler(create(pool('p', ['10.0.0.3'])))).toMatchObject({
      allowed: false,
      message: expect.stringContaining('InClusterIPPool ns/other'),
    });
    expect(await handler(create(pool('q', ['10.0.0.9'])))).toEqual({ allowed: true });
  });
});
