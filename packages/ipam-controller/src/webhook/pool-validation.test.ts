import { describe, expect, test } from '@jest/globals';
import type { IPPool, PoolSpec, PoolVrfStatus } from '@metal-l2/api';
import { validatePool, validatePoolDelete, validatePoolUpdate } from './pool-validation.js';

function pool(
  name: string,
  spec: Partial<PoolSpec>,
  extra: { namespace?: string; kind?: IPPool['kind']; allocations?: Record<string, string>; vrfStatus?: PoolVrfStatus } = {},
): IPPool {
  const kind = extra.kind ?? 'InClusterIPPool';
  const status = {
    ...(extra.allocations === undefined ? {} : { allocations: extra.allocations }),
    ...(extra.vrfStatus === undefined ? {} : { vrf: extra.vrfStatus }),
  };
  return {
    apiVersion: 'ipam.metal.x-k8s.io/v1alpha1',
    kind,
    metadata: { name, ...(kind === 'InClusterIPPool' ? { namespace: extra.namespace ?? 'ns' } : {}) },
    spec: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 24, ...spec },
    ...(Object.keys(status).length === 0 ? {} : { status }),
  };
}

const vrf = {
  projectID: '5e0f2c5a-8a3b-4a4e-9d4c-1b2c3d4e5f60',
  metro: 'da',
  credentialsSecretRef: { name: 'metal' },
  vrfID: '0b0f2c5a-8a3b-4a4e-9d4c-1b2c3d4e5f60',
};

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

const create = { name: 'pools', ipRanges: ['10.0.0.0/16'] };
const createdVrf = {
  projectID: vrf.projectID,
  metro: 'da',
  credentialsSecretRef: { name: 'metal' },
  create,
  vxlan: 1000,
  metalGateway: true,
};
const recorded: PoolVrfStatus = { vrfID: 'v', reservationID: 'r', subnet: '10.0.0.0/24', created: ['VRF', 'Reservation'] };

describe('VRF rules', () => {
  test.each([
    {
      name: 'a subnet outside the ranges of the VRF to create',
      spec: { vrf: { ...createdVrf, create: { ...create, ipRanges: ['10.9.0.0/16'] } } },
      want: 'spec.vrf.create.ipRanges: the pool subnet 10.0.0.0/24 must lie inside',
    },
    {
      name: 'a prefix Metal does not reserve in a VRF',
      spec: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 20, vrf: createdVrf },
      want: 'spec.prefix: a VRF reservation of IPv4 must be /22 to /29',
    },
    {
      name: 'an IPv6 subnet other than /64',
      spec: { addresses: ['fd00::10'], prefix: 96, vrf: { ...createdVrf, create: { ...create, ipRanges: ['fd00::/64'] } } },
      want: 'must be /64',
    },
    {
      name: 'credentials in another namespace',
      spec: { vrf: { ...vrf, credentialsSecretRef: { name: 'metal', namespace: 'other' } } },
      want: "spec.vrf.credentialsSecretRef.namespace: must be the pool's own namespace ns (or left out), not other",
    },
  ])('refuse $name', ({ spec, want }) => {
    const verdict = validatePool(pool('p', spec), []);
    expect(verdict.allowed ? '' : verdict.message).toContain(want);
  });

  test('allow a subnet inside the ranges, credentials in the own namespace, and a global pool naming any namespace', () => {
    expect(validatePool(pool('p', { vrf: { ...createdVrf, credentialsSecretRef: { name: 'metal', namespace: 'ns' } } }), [])).toEqual({
      allowed: true,
    });
    const global = pool(
      'g',
      { vrf: { ...vrf, credentialsSecretRef: { name: 'metal', namespace: 'metal-system' } } },
      { kind: 'GlobalInClusterIPPool' },
    );
    expect(validatePool(global, [])).toEqual({ allowed: true });
  });

  test('refuse overlap between pools that create the same VRF, wherever they are declared', () => {
    const verdict = validatePool(pool('p', { vrf: createdVrf }), [
      pool('other', { addresses: ['10.0.0.15'], vrf: createdVrf }, { kind: 'GlobalInClusterIPPool' }),
    ]);
    expect(verdict).toEqual({ allowed: false, message: expect.stringContaining('GlobalInClusterIPPool other') });
  });

  test.each([
    { name: 'the VLAN', change: { vxlan: 1001 }, field: 'spec.vrf.vxlan' },
    { name: 'the VRF to create', change: { create: { ...create, name: 'renamed' } }, field: 'spec.vrf.create' },
    { name: 'the metro', change: { metro: 'sv' }, field: 'spec.vrf.metro' },
  ])('refuse changing $name once Metal resources exist, even without allocations', ({ change, field }) => {
    const old = pool('p', { vrf: createdVrf }, { vrfStatus: recorded });
    const verdict = validatePoolUpdate(old, pool('p', { vrf: { ...createdVrf, ...change } }), []);
    expect(verdict.allowed ? '' : verdict.message).toContain(`${field}: cannot change once the pool has Metal resources`);
  });

  test('refuse moving the subnet or dropping spec.vrf once reserved; allow turning the gateway off and growing the range', () => {
    const old = pool('p', { vrf: createdVrf }, { vrfStatus: recorded });
    const moved = validatePoolUpdate(old, pool('p', { addresses: ['10.0.1.10'], vrf: createdVrf }), []);
    expect(moved.allowed ? '' : moved.message).toContain('reserved in Metal as 10.0.0.0/24');
    const dropped = validatePoolUpdate(old, pool('p', {}), []);
    expect(dropped.allowed ? '' : dropped.message).toContain('spec.vrf: cannot be removed');
    expect(
      validatePoolUpdate(old, pool('p', { addresses: ['10.0.0.10-10.0.0.200'], vrf: { ...createdVrf, metalGateway: false } }), []),
    ).toEqual({ allowed: true });
  });

  test('allow any change before the pool has Metal resources', () => {
    const old = pool('p', { vrf: createdVrf });
    expect(validatePoolUpdate(old, pool('p', { vrf: { ...createdVrf, vxlan: 1001 } }), [])).toEqual({ allowed: true });
  });
});
