// Each rule as a table of named situations: null when allowed, the rule's name when refused.

import { describe, expect, test } from '@jest/globals';
import { checkNoBatchInProgress } from './batch-in-progress.js';
import { checkBgpConfigRequest, checkBgpSessionCreatable } from './bgp.js';
import { checkBond, checkDisbond } from './bonding.js';
import { checkDeviceActive } from './device-active.js';
import { checkDeviceDeletable, checkNotDeprovisioning } from './device-deletion.js';
import { checkGatewayReservation, checkGatewaySameMetro, checkOneGatewayPerVlan, checkPrivateSubnetSize } from './metal-gateway.js';
import { checkNativeVlanAssigned, checkNativeVlanPortMode } from './native-vlan.js';
import { checkNetworkNotFrozen } from './network-frozen.js';
import { checkConvertLayer2, checkConvertLayer3 } from './port-conversion.js';
import { checkPortCarriesVlans } from './port-vlan-capable.js';
import type { BgpConfig } from '../models.js';
import type { RuleViolation } from './rule.js';
import { checkUserStateEvent } from './user-state.js';
import { checkAssignmentChange } from './vlan-assignment-state.js';
import { checkVlanDeletable } from './vlan-in-use.js';
import { checkVlanInDeviceMetro } from './vlan-metro.js';
import { checkVrfIpRanges } from './vrf-ip-ranges.js';
import { checkVrfQuota } from './vrf-quota.js';
import { checkVrfReservation } from './vrf-reservation.js';
import { checkVxlanRange } from './vxlan-range.js';
import { checkVxlanUnique } from './vxlan-unique.js';

const member = (name: string, bonded: boolean, isPrimary: boolean, vlanCount = 0) => ({ name, bonded, isPrimary, vlanCount });

const bgpConfig = (status: 'requested' | 'enabled'): BgpConfig => ({
  id: 'c',
  projectId: 'p',
  asn: 65000,
  deploymentType: status === 'enabled' ? 'local' : 'global',
  status,
  md5: undefined,
  useCase: undefined,
  createdAt: '2026-01-01T00:00:00Z',
});

const cases: [string, RuleViolation | null, string | null][] = [
  ['a VLAN of the device metro is allowed', checkVlanInDeviceMetro({ vxlan: 5, vlanMetro: 'da', deviceMetro: 'DA' }), null],
  ['a VLAN of another metro is refused', checkVlanInDeviceMetro({ vxlan: 5, vlanMetro: 'sv', deviceMetro: 'da' }), 'vlan-metro-local'],
  ['vxlan 2 and 3999 are in range', checkVxlanRange(2) ?? checkVxlanRange(3999), null],
  ['vxlan 4000 is out of range', checkVxlanRange(4000), 'vxlan-range'],
  ['the same vxlan in another metro is allowed', checkVxlanUnique({ vxlan: 5, metro: 'da', existing: [{ vxlan: 5, metro: 'sv' }] }), null],
  [
    'the same vxlan in the same metro is refused',
    checkVxlanUnique({ vxlan: 5, metro: 'da', existing: [{ vxlan: 5, metro: 'da' }] }),
    'vxlan-unique-per-project-metro',
  ],
  ['a frozen network refuses port changes', checkNetworkNotFrozen({ hostname: 'h', networkFrozen: true }), 'network-frozen'],
  ['a provisioning device refuses port changes', checkDeviceActive({ hostname: 'h', state: 'provisioning' }), 'device-active'],
  ['a bonded eth port cannot carry VLANs', checkPortCarriesVlans({ kind: 'physical', name: 'eth1', bonded: true }), 'port-carries-vlans'],
  ['a bond with a bonded port carries VLANs', checkPortCarriesVlans({ kind: 'bond', name: 'bond0', activeMembers: 1 }), null],
  [
    'assigning an assigned VLAN is refused',
    checkAssignmentChange({ port: 'bond0', vxlan: 5, want: 'assigned', isAssigned: true }),
    'vlan-assignment-state',
  ],
  [
    'unassigning an assigned VLAN is allowed',
    checkAssignmentChange({ port: 'bond0', vxlan: 5, want: 'unassigned', isAssigned: true }),
    null,
  ],
  ['a native VLAN among the assigned is allowed', checkNativeVlanAssigned({ port: 'eth1', vxlan: 5, assignedVxlans: [4, 5] }), null],
  [
    'a native VLAN not assigned is refused',
    checkNativeVlanAssigned({ port: 'eth1', vxlan: 6, assignedVxlans: [4, 5] }),
    'native-vlan-assigned',
  ],
  [
    'a native VLAN on a layer-3 bond is refused',
    checkNativeVlanPortMode({ port: 'bond0', kind: 'bond', layer2: false }),
    'native-vlan-port-mode',
  ],
  ['a native VLAN on a layer-2 bond is allowed', checkNativeVlanPortMode({ port: 'bond0', kind: 'bond', layer2: true }), null],
  ['converting eth1 is refused', checkConvertLayer2({ name: 'eth1', kind: 'physical', layer2: false }), 'convert-bond-port-only'],
  ['converting a layer-3 bond to layer 2 is allowed', checkConvertLayer2({ name: 'bond0', kind: 'bond', layer2: false }), null],
  [
    'converting a layer-2 bond to layer 2 is refused',
    checkConvertLayer2({ name: 'bond0', kind: 'bond', layer2: true }),
    'convert-layer2-state',
  ],
  [
    'converting to layer 3 with VLANs is refused',
    checkConvertLayer3({ name: 'bond0', kind: 'bond', layer2: true, unbondedMembers: [], assignedVxlans: [5] }),
    'layer3-needs-vlans-unassigned',
  ],
  [
    'converting to layer 3 with unbonded ports is refused',
    checkConvertLayer3({ name: 'bond0', kind: 'bond', layer2: true, unbondedMembers: ['eth1'], assignedVxlans: [] }),
    'convert-layer3-state',
  ],
  [
    'converting a clean layer-2 bond to layer 3 is allowed',
    checkConvertLayer3({ name: 'bond0', kind: 'bond', layer2: true, unbondedMembers: [], assignedVxlans: [] }),
    null,
  ],
  ['bonding a bonded port is refused', checkBond({ port: 'eth1', targets: [member('eth1', true, false)] }), 'bond-state'],
  ['bonding a port with VLANs is refused', checkBond({ port: 'eth1', targets: [member('eth1', false, false, 1)] }), 'bond-state'],
  ['bonding a clean disbonded port is allowed', checkBond({ port: 'eth1', targets: [member('eth1', false, false)] }), null],
  [
    'eth0 cannot leave a layer-3 bond',
    checkDisbond({
      port: 'eth0',
      bondName: 'bond0',
      bondLayer2: false,
      bondVlanCount: 0,
      targets: [member('eth0', true, true)],
      remainingBonded: 1,
    }),
    'disbond-state',
  ],
  [
    'eth1 may leave a layer-3 bond',
    checkDisbond({
      port: 'eth1',
      bondName: 'bond0',
      bondLayer2: false,
      bondVlanCount: 0,
      targets: [member('eth1', true, false)],
      remainingBonded: 1,
    }),
    null,
  ],
  [
    'a layer-2 bond with VLANs cannot lose all its ports',
    checkDisbond({
      port: 'bond0',
      bondName: 'bond0',
      bondLayer2: true,
      bondVlanCount: 1,
      targets: [member('eth0', true, true), member('eth1', true, false)],
      remainingBonded: 0,
    }),
    'disbond-state',
  ],
  ['a second open batch is refused', checkNoBatchInProgress({ port: 'bond0', openBatchIds: ['b1'] }), 'one-batch-per-port'],
  [
    'a VLAN in use cannot be deleted',
    checkVlanDeletable({ vxlan: 5, assignedPorts: ['h/bond0'], metalGatewayIds: [], openBatchIds: [] }),
    'vlan-delete-in-use',
  ],
  ['an unused VLAN can be deleted', checkVlanDeletable({ vxlan: 5, assignedPorts: [], metalGatewayIds: [], openBatchIds: [] }), null],
  ['VRF ranges /8, /29 and a /59 v6 are allowed', checkVrfIpRanges(['10.0.0.0/8', '192.168.0.0/29', '2001:db8::/59']), null],
  ['a /30 VRF range is refused', checkVrfIpRanges(['192.168.0.0/30']), 'vrf-ip-ranges'],
  ['overlapping VRF ranges are refused', checkVrfIpRanges(['10.0.0.0/16', '10.0.128.0/17']), 'vrf-ip-ranges'],
  [
    'a /24 inside the VRF is allowed',
    checkVrfReservation({ network: '10.0.1.0', cidr: 24, vrfRanges: ['10.0.0.0/16'], existing: [] }),
    null,
  ],
  [
    'a /30 VRF reservation is refused',
    checkVrfReservation({ network: '10.0.1.0', cidr: 30, vrfRanges: ['10.0.0.0/16'], existing: [] }),
    'vrf-reservation-size',
  ],
  [
    'a reservation with host bits is refused',
    checkVrfReservation({ network: '10.0.1.1', cidr: 24, vrfRanges: ['10.0.0.0/16'], existing: [] }),
    'vrf-reservation-size',
  ],
  [
    'a reservation outside the ranges is refused',
    checkVrfReservation({ network: '10.1.0.0', cidr: 24, vrfRanges: ['10.0.0.0/16'], existing: [] }),
    'vrf-reservation-in-range',
  ],
  [
    'an overlapping reservation is refused',
    checkVrfReservation({ network: '10.0.0.0', cidr: 23, vrfRanges: ['10.0.0.0/16'], existing: ['10.0.1.0/24'] }),
    'vrf-reservation-overlap',
  ],
  [
    'a v6 /64 inside the VRF is allowed',
    checkVrfReservation({ network: '2001:db8::', cidr: 64, vrfRanges: ['2001:db8::/59'], existing: [] }),
    null,
  ],
  ['a second gateway on a VLAN is refused', checkOneGatewayPerVlan({ vxlan: 5, existingGatewayIds: ['g'] }), 'one-metal-gateway-per-vlan'],
  ['a gateway across metros is refused', checkGatewaySameMetro({ vlanMetro: 'da', reservationMetro: 'sv' }), 'metal-gateway-same-metro'],
  [
    'a public /29 can back a gateway',
    checkGatewayReservation({ type: 'public_ipv4', prefix: 29, family: 4, usedByGatewayId: undefined }),
    null,
  ],
  [
    'a public /30 cannot back a gateway',
    checkGatewayReservation({ type: 'public_ipv4', prefix: 30, family: 4, usedByGatewayId: undefined }),
    'metal-gateway-reservation',
  ],
  [
    'a used reservation cannot back another gateway',
    checkGatewayReservation({ type: 'vrf', prefix: 24, family: 4, usedByGatewayId: 'g' }),
    'metal-gateway-reservation',
  ],
  ['a private subnet of 12 is refused', checkPrivateSubnetSize(12), 'metal-gateway-private-subnet-size'],
  ['the eighth VRF is allowed', checkVrfQuota({ existing: 7, limit: 8 }), null],
  ['the ninth VRF is refused', checkVrfQuota({ existing: 8, limit: 8 }), 'vrf-quota'],
  ['a succeeded user state with code 1001 is allowed', checkUserStateEvent({ state: 'succeeded', code: 1001 }), null],
  ['an active device can be deleted', checkDeviceDeletable({ hostname: 'h', state: 'active', locked: false }), null],
  ['a queued device can be deleted', checkDeviceDeletable({ hostname: 'h', state: 'queued', locked: false }), null],
  ['a locked device cannot be deleted', checkDeviceDeletable({ hostname: 'h', state: 'active', locked: true }), 'device-delete-state'],
  [
    'a provisioning device cannot be deleted',
    checkDeviceDeletable({ hostname: 'h', state: 'provisioning', locked: false }),
    'device-delete-state',
  ],
  [
    'a deprovisioning device cannot be deleted again',
    checkDeviceDeletable({ hostname: 'h', state: 'deprovisioning', locked: false }),
    'device-delete-state',
  ],
  ['a deprovisioning device takes no changes', checkNotDeprovisioning({ hostname: 'h', state: 'deprovisioning' }), 'device-deprovisioning'],
  ['a deprovisioning device refuses port changes', checkDeviceActive({ hostname: 'h', state: 'deprovisioning' }), 'device-active'],
  ['a user state code of 1100 is refused', checkUserStateEvent({ state: 'failed', code: 1100 }), 'user-state-event'],
  [
    'a BGP session on a project without BGP is refused',
    checkBgpSessionCreatable({ hostname: 'h', addressFamily: 'ipv4', projectBgp: undefined, existingFamilies: [] }),
    'bgp-session-needs-project-bgp',
  ],
  [
    'a BGP session while global BGP is only requested is refused',
    checkBgpSessionCreatable({ hostname: 'h', addressFamily: 'ipv4', projectBgp: bgpConfig('requested'), existingFamilies: [] }),
    'bgp-session-needs-project-bgp',
  ],
  [
    'a first ipv4 session with BGP enabled is allowed',
    checkBgpSessionCreatable({ hostname: 'h', addressFamily: 'ipv4', projectBgp: bgpConfig('enabled'), existingFamilies: ['ipv6'] }),
    null,
  ],
  [
    'a second ipv4 session is refused',
    checkBgpSessionCreatable({ hostname: 'h', addressFamily: 'ipv4', projectBgp: bgpConfig('enabled'), existingFamilies: ['ipv4'] }),
    'bgp-session-one-per-family',
  ],
  ['a first BGP config is allowed', checkBgpConfigRequest(undefined), null],
  ['a second BGP config is refused', checkBgpConfigRequest(bgpConfig('enabled')), 'bgp-config-exists'],
];

describe('rules', () => {
  test.each(cases)('%s', (_name, got, rule) => {
    expect(got?.rule ?? null).toBe(rule);
    if (got !== null) expect(got.message.length).toBeGreaterThan(10);
  });
});
