import { describe, expect, test } from '@jest/globals';
import type { IPPool } from '@metal-l2/api';
import { extendedHold, reuseHoldBlocker } from './reuse-hold.js';

const now = new Date('2026-12-04T10:00:00.300Z');

function pool(grace: number | undefined, reuseHeldUntil?: string): IPPool {
  return {
    apiVersion: 'ipam.metal.x-k8s.io/v1alpha1',
    kind: 'InClusterIPPool',
    metadata: { name: 'p', namespace: 'ns' },
    spec: { addresses: ['10.0.0.0/24'], prefix: 24, ...(grace === undefined ? {} : { addressReuseGracePeriodSeconds: grace }) },
    ...(reuseHeldUntil === undefined ? {} : { status: { reuseHeldUntil } }),
  };
}

describe('the reuse hold after lost records', () => {
  test('a whole grace period from now, rounded up, never shortening a later hold; none without a grace period', () => {
    expect(extendedHold(pool(30), now)).toBe('2026-12-04T10:00:31Z');
    expect(extendedHold(pool(30, '2026-12-04T11:00:00Z'), now)).toBe('2026-12-04T11:00:00Z');
    expect(extendedHold(pool(30, '2026-12-04T09:00:00Z'), now)).toBe('2026-12-04T10:00:31Z');
    expect(extendedHold(pool(0), now)).toBeUndefined();
    expect(extendedHold(pool(undefined), now)).toBeUndefined();
  });

  test('blocks allocation until it ends, and says until when and why', () => {
    const blocker = reuseHoldBlocker(pool(30, '2026-12-04T10:00:31Z'), now);
    expect(blocker).toMatchObject({ reason: 'AllocationRecordsLost', untilMs: Date.parse('2026-12-04T10:00:31Z') });
    expect(blocker?.message).toContain('none is handed out before 2026-12-04T10:00:31Z');
    expect(reuseHoldBlocker(pool(30, '2026-12-04T10:00:00Z'), now)).toBeUndefined();
    expect(reuseHoldBlocker(pool(30), now)).toBeUndefined();
  });
});
