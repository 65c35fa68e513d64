import { describe, expect, test } from '@jest/globals';
import type { PoolVrfStatus } from '@metal-l2/api';
import { describeReady, idOf, isCreated, reservedAddressesOf, withIntent, withResource, withoutResource } from './vrf-status.js';

const full: PoolVrfStatus = {
  vrfID: 'vrf-1',
  vlanID: 'vlan-1',
  vxlan: 1000,
  reservationID: 'r-1',
  subnet: '10.60.1.0/24',
  metalGatewayID: 'gw-1',
  gatewayAddress: '10.60.1.1',
  created: ['VRF', 'VLAN', 'Reservation', 'MetalGateway'],
};

describe('status.vrf edits', () => {
  test('created stays in creation order whatever order resources are recorded in', () => {
    let status: PoolVrfStatus = {};
    status = withResource(status, 'MetalGateway', { id: 'gw', created: true });
    status = withResource(status, 'VRF', { id: 'v', created: true });
    status = withResource(status, 'VLAN', { id: 'l', created: false, details: { vxlan: 7 } });
    expect(status).toEqual({ metalGatewayID: 'gw', vrfID: 'v', vlanID: 'l', vxlan: 7, created: ['VRF', 'MetalGateway'] });
  });

  test('an adopted resource is recorded without being marked created, and recording it again changes nothing', () => {
    const status = withResource({}, 'VRF', { id: 'v', created: false });
    expect(status).toEqual({ vrfID: 'v' });
    expect(withResource(status, 'VRF', { id: 'v', created: false })).toEqual(status);
  });

  test('forgetting a reservation forgets its gateway with it when asked, and the details of both', () => {
    expect(withoutResource(full, 'Reservation', { withDependents: true })).toEqual({
      vrfID: 'vrf-1',
      vlanID: 'vlan-1',
      vxlan: 1000,
      created: ['VRF', 'VLAN'],
    });
    expect(withoutResource(full, 'VRF', { withDependents: true })).toEqual({ vlanID: 'vlan-1', vxlan: 1000, created: ['VLAN'] });
  });

  test('forgetting the last created resource drops the created list', () => {
    expect(withoutResource({ vrfID: 'v', created: ['VRF'] }, 'VRF')).toEqual({});
  });

  test('an intent marks the gateway as the pool’s before it has an id', () => {
    const status = withIntent({ reservationID: 'r' }, 'MetalGateway');
    expect(isCreated(status, 'MetalGateway')).toBe(true);
    expect(idOf(status, 'MetalGateway')).toBeUndefined();
  });

  test('the Metal Gateway address is reserved, and the ready message names every id', () => {
    expect(reservedAddressesOf(full)).toEqual(['10.60.1.1']);
    expect(reservedAddressesOf({})).toEqual([]);
    expect(describeReady(full)).toBe('VRF vrf-1, subnet 10.60.1.0/24 reserved (r-1), VLAN 1000 (vlan-1), Metal Gateway 10.60.1.1 (gw-1)');
  });
});
