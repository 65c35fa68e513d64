import { describe, expect, test } from '@jest/globals';
import type { IPPool, PoolSpec } from '@metal-l2/api';
import { validatePool, validatePoolDelete, validatePoolUpdate } from './pool-validation.js';

function pool(name: string, spec: Partial<PoolSpec>, extra: { namespace?: string; kind?: IPPool['kind']; allocations?: Record<string, string> } = {}): IPPool {
  const kind = extra.kind ?? 'InClusterIPPool';
  return {
    apiVersion: 'ipam.metal.x-k8s.io/v1alpha1',
    kind,
    metadata: { name, ...(kind === 'InClusterIPPool' ? { namespace: extra.namespace ?? 'ns' } : {}) },
    spec: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 24, ...spec },
    ...(extra.allocations === undefined ? {} : { status: { allocations: extra.allocations } }),
  };
}

const vrf = { projectID: '5e0f2c5a-8a3b-4a4e-9d4c-1b2c3d4e5f60', metro: 'da', credentialsSecretRef: { name: 'metal' }, vrfID: '0b0f2c5a-8a3b-4a4e-9d4c-1b2c3d4e5f60' };

describe('validatePool', () => {
  test.each([
    { name: 'mixed families', spec: { addresses: ['10.0.0.1', 'fd00::1'] }, want: /mixed/i },
    { name: 'an entry outside the prefix', spec: { addresses: ['10.0.0.1', '10.0.1.1'] }, want: /subnet|prefix/i },
    { name: 'a gateway of the other family', spec: { gateway: 'fd00::1' }, want: /gateway/i },
    { name: 'a gateway outside the subnet', spec: { gateway: '10.9.0.1' }, want: /gateway/i },
  ])('refuses $name', ({ spec, want }) => {
    const verdict = validatePool(pool('p', spec), []);
    expect(verdict.allowed).toBe(false);
    expect(verdict.allowed ? '' : verdict.message).toMatch(want);
  });

  test('refuses overlap with a pool in the same namespace and names it', () => {
    const verdict = validatePool(pool('p', { addresses: ['10.0.0.15-10.0.0.30'] }), [pool('other', {})]);
    expect(verdict).toEqual({ allowed: false, message: expect.stringContaining('InClusterIPPool ns/other') });
  });

  test('allows the same range in another namespace', () => {
    expect(validatePool(pool('p', {}), [pool('other', {}, { namespace: 'elsewhere' })])).toEqual({ allowed: true });
  });

  test('refuses overlap between global pools', () => {
    const verdict = validatePool(pool('g1', {}, { kind: 'GlobalInClusterIPPool' }), [pool('g2', {}, { kind: 'GlobalInClusterIPPool' })]);
    expect(verdict.allowed).toBe(false);
  });

  test('refuses overlap with a pool of another namespace in the same VRF', () => {
    const verdict = validatePool(pool('p', { vrf }), [pool('other', { vrf }, { namespace: 'elsewhere' })]);
    expect(verdict).toEqual({ allowed: false, message: expect.stringContaining('elsewhere/other') });
  });
});

describe('validatePoolUpdate', () => {
  test('refuses shrinking below an allocated address and lists it', () => {
    const old = pool('p', {}, { allocations: { '10.0.0.20': 'c1' } });
    const verdict = validatePoolUpdate(old, pool('p', { addresses: ['10.0.0.10-10.0.0.15'] }), []);
    expect(verdict).toEqual({ allowed: false, message: expect.stringContaining('10.0.0.20') });
  });

  test('allows growing a pool in use', () => {
    const old = pool('p', {}, { allocations: { '10.0.0.20': 'c1' } });
    expect(validatePoolUpdate(old, pool('p', { addresses: ['10.0.0.10-10.0.0.40'] }), [])).toEqual({ allowed: true });
  });

  test('refuses moving a pool with allocations to another VRF', () => {
    const old = pool('p', { vrf }, { allocations: { '10.0.0.20': 'c1' } });
    const moved = pool('p', { vrf: { ...vrf, vrfID: '1b0f2c5a-8a3b-4a4e-9d4c-1b2c3d4e5f60' } });
    expect(validatePoolUpdate(old, moved, [])).toEqual({ allowed: false, message: expect.stringContaining('another VRF') });
  });
});

describe('validatePoolDelete', () => {
  test('refuses deleting a pool in use and names the claims', () => {
    const verdict = validatePoolDelete(pool('p', {}, { allocations: { '10.0.0.11': 'web-1', '10.0.0.12': 'web-2@2026-01-01T00:00:00Z' } }));
    expect(verdict).toEqual({ allowed: false, message: expect.stringContaining('web-1 (10.0.0.11)') });
    expect(verdict.allowed ? '' : verdict.message).not.toContain('web-2');
  });

  test('allows deleting an empty pool, or one annotated to skip the check', () => {
    expect(validatePoolDelete(pool('p', {}))).toEqual({ allowed: true });
    const annotated = pool('p', {}, { allocations: { '10.0.0.11': 'web-1' } });
    annotated.metadata.annotations = { 'ipam.metal.x-k8s.io/skip-validate-delete-webhook': '' };
    expect(validatePoolDelete(annotated)).toEqual({ allowed: true });
  });
});
