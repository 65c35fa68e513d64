import { describe, expect, test } from '@jest/globals';
import type { AnyIPReservation } from '@metal-l2/metal-api';
import { clusterReservation, elasticIpIdentifier, isExistingBgpSession } from './vip-manager.js';

const pub = (id: string, tags: string[] = []): AnyIPReservation => ({ id, type: 'public_ipv4', address: `147.75.0.${id}`, tags });
const vrf = (id: string): AnyIPReservation => ({ id, type: 'vrf', tags: [] });

describe('clusterReservation (GetIPByClusterIdentifier as CAPP reads it)', () => {
  test('the first reservation tagged for the cluster wins', () => {
    const list = [pub('1'), pub('2', [elasticIpIdentifier('c1')]), pub('3', [elasticIpIdentifier('c1')])];
    expect(clusterReservation(list, 'c1')?.id).toBe('2');
  });

  test('without a tagged one, the last public reservation of the list comes back (CAPP ignores the not-found error)', () => {
    expect(clusterReservation([pub('1', [elasticIpIdentifier('other')]), pub('2')], 'c1')?.id).toBe('2');
  });

  test.each([
    { name: 'an empty list', list: [] },
    { name: 'a list ending in a VRF reservation', list: [pub('1'), vrf('2')] },
  ])('$name gives nothing (a nil pointer in CAPP)', ({ list }) => {
    expect(clusterReservation(list, 'c1')).toBeUndefined();
  });
});

test('a 422 "already has session" is an existing BGP session; other answers are not', () => {
  expect(isExistingBgpSession(422, 'createBgpSession answered HTTP 422: device already has session')).toBe(true);
  expect(isExistingBgpSession(422, 'BGP is not enabled on the project')).toBe(false);
  expect(isExistingBgpSession(404, 'already has session')).toBe(false);
});
