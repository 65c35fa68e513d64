import { describe, expect, test } from '@jest/globals';
import { claimName, endpointClaimName, nameLabelValue, wantedClaims } from './claim-names.js';

const pool = { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'vlan-1000' };

describe('claimName', () => {
  test('names a claim by machine, port, vxlan and position', () => {
    expect(claimName('worker-a', { port: 'bond0', vxlan: 1000, index: 0 })).toBe('worker-a-bond0-v1000-0');
  });

  test('a name too long keeps a prefix and ends in a hash; two long names stay distinct', () => {
    const long = 'm'.repeat(250);
    const a = claimName(long, { port: 'bond0', vxlan: 1000, index: 0 });
    const b = claimName(long, { port: 'bond0', vxlan: 1000, index: 1 });
    expect(a.length).toBeLessThanOrEqual(253);
    expect(a).toMatch(/^m+-[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
  });
});

describe('wantedClaims', () => {
  test('one claim per pool entry; a pool listed twice gives two claims', () => {
    const claims = wantedClaims('w', {
      ports: [
        { name: 'bond0', vlans: [{ vxlan: 1000, addressesFromPools: [pool, pool] }, { vxlan: 1001 }] },
        { name: 'eth1', bonded: false, vlans: [{ vxlan: 1002, addressesFromPools: [{ ...pool, name: 'v6' }] }] },
      ],
    });
    expect(claims.map((c) => c.name)).toEqual(['w-bond0-v1000-0', 'w-bond0-v1000-1', 'w-eth1-v1002-0']);
    expect(claims[2]?.poolRef.name).toBe('v6');
  });
});

describe('nameLabelValue', () => {
  const labelValue = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

  test('a name of up to 63 characters is its own label value', () => {
    expect(nameLabelValue('worker-a')).toBe('worker-a');
    expect(nameLabelValue('w'.repeat(63))).toBe('w'.repeat(63));
  });

  test('a longer name fits in 63 characters, stays a valid label value, and two such names stay distinct', () => {
    for (const name of [`long-${'a'.repeat(64)}`, `${'a'.repeat(54)}-.-${'b'.repeat(20)}`, 'x'.repeat(253)]) {
      const value = nameLabelValue(name);
      expect(value.length).toBeLessThanOrEqual(63);
      expect(value).toMatch(labelValue);
      expect(value.slice(0, 20)).toBe(name.slice(0, 20));
    }
    expect(nameLabelValue(`${'a'.repeat(70)}1`)).not.toBe(nameLabelValue(`${'a'.repeat(70)}2`));
  });
});

describe('endpointClaimName', () => {
  test('is <cluster>-endpoint, shortened with a hash past 253 characters', () => {
    expect(endpointClaimName('prod')).toBe('prod-endpoint');
    const long = endpointClaimName('c'.repeat(250));
    expect(long.length).toBeLessThanOrEqual(253);
    expect(long).toMatch(/^c+-[0-9a-f]{8}$/);
  });
});
