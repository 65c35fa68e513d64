import { describe, expect, test } from '@jest/globals';
import { forwardFrame, PUBLIC_SEGMENT, type Egress, type Ingress, type SwitchPortConfig } from './forwarding.js';

// A rack: server A hybrid-bonded (a0+a1 one LAG, layer 3 untagged, VLANs 1000 and 1001 tagged),
// server B layer2-individual (b0 VLAN 1000 tagged, b1 native VLAN 1002), server C layer 3 only,
// server D hybrid (d0 still in its layer-3 bond, d1 out of it with native 1002 and tagged 1000).
const rack: SwitchPortConfig[] = [
  { id: 'a0', group: 'a-bond0', untagged: PUBLIC_SEGMENT, tagged: [1000, 1001], up: true },
  { id: 'a1', group: 'a-bond0', untagged: PUBLIC_SEGMENT, tagged: [1000, 1001], up: true },
  { id: 'b0', group: 'b0', untagged: undefined, tagged: [1000], up: true },
  { id: 'b1', group: 'b1', untagged: 1002, tagged: [1002], up: true },
  { id: 'c0', group: 'c-bond0', untagged: PUBLIC_SEGMENT, tagged: [], up: true },
  { id: 'c1', group: 'c-bond0', untagged: PUBLIC_SEGMENT, tagged: [], up: true },
  { id: 'd0', group: 'd-bond0', untagged: PUBLIC_SEGMENT, tagged: [], up: true },
  { id: 'd1', group: 'd1', untagged: 1002, tagged: [1000, 1002], up: true },
];

const cases: { name: string; ports?: SwitchPortConfig[]; ingress: Ingress; want: Egress[] }[] = [
  {
    name: 'VLAN 1000 tagged from a bond reaches the other servers carrying 1000, tagged',
    ingress: { portId: 'a0', vid: 1000 },
    want: [
      { portId: 'b0', vid: 1000 },
      { portId: 'd1', vid: 1000 },
    ],
  },
  { name: 'a frame never goes back into its own LAG (from the second member)', ingress: { portId: 'a1', vid: 1001 }, want: [] },
  {
    name: 'into a LAG it leaves through one member only',
    ingress: { portId: 'b0', vid: 1000 },
    want: [
      { portId: 'a0', vid: 1000 },
      { portId: 'd1', vid: 1000 },
    ],
  },
  {
    name: 'untagged from a layer-3 bond is the public segment, untagged on every layer-3 bond',
    ingress: { portId: 'a1', vid: undefined },
    want: [
      { portId: 'c0', vid: undefined },
      { portId: 'd0', vid: undefined },
    ],
  },
  { name: 'untagged on a layer-2 port without a native VLAN is dropped', ingress: { portId: 'b0', vid: undefined }, want: [] },
  { name: 'a VLAN the port does not carry is dropped', ingress: { portId: 'c0', vid: 1000 }, want: [] },
  { name: 'a VLAN assigned elsewhere but not here is dropped (b0 sends 1001)', ingress: { portId: 'b0', vid: 1001 }, want: [] },
  {
    name: 'untagged on a native-VLAN port joins the native VLAN and leaves untagged on the other native port',
    ingress: { portId: 'b1', vid: undefined },
    want: [{ portId: 'd1', vid: undefined }],
  },
  {
    name: 'the native VLAN sent tagged is accepted and leaves untagged where it is native',
    ingress: { portId: 'd1', vid: 1002 },
    want: [{ portId: 'b1', vid: undefined }],
  },
  {
    name: 'a port that is down neither sends nor receives',
    ports: rack.map((p) => (p.id === 'b0' ? { ...p, up: false } : p)),
    ingress: { portId: 'a0', vid: 1000 },
    want: [{ portId: 'd1', vid: 1000 }],
  },
  {
    name: 'a LAG whose first member is down leaves through the second',
    ports: rack.map((p) => (p.id === 'a0' ? { ...p, up: false } : p)),
    ingress: { portId: 'b0', vid: 1000 },
    want: [
      { portId: 'a1', vid: 1000 },
      { portId: 'd1', vid: 1000 },
    ],
  },
  { name: 'an unknown port forwards nothing', ingress: { portId: 'zz', vid: undefined }, want: [] },
];

describe('forwardFrame', () => {
  test.each(cases)('$name', ({ ports, ingress, want }) => {
    expect(forwardFrame(ports ?? rack, ingress)).toEqual(want);
  });
});
