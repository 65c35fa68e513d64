import { describe, expect, test } from '@jest/globals';
import { deriveNetworkType } from './port-layout.js';
import type { PortShape } from './port-layout.js';

const bond = (o: Partial<PortShape> = {}): PortShape => ({ isBond: true, bonded: true, layer2: false, vlanCount: 0, ...o });
const eth = (o: Partial<PortShape> = {}): PortShape => ({ isBond: false, bonded: true, layer2: false, vlanCount: 0, ...o });

const cases: { name: string; ports: PortShape[]; want: ReturnType<typeof deriveNetworkType> }[] = [
  { name: 'a fresh server is layer3', ports: [bond(), eth(), eth()], want: 'layer3' },
  { name: 'VLANs on a layer-3 bond make it hybrid-bonded', ports: [bond({ vlanCount: 1 }), eth(), eth()], want: 'hybrid-bonded' },
  { name: 'eth1 out of a layer-3 bond is hybrid', ports: [bond(), eth(), eth({ bonded: false, vlanCount: 1 })], want: 'hybrid' },
  { name: 'hybrid wins over VLANs on the bond', ports: [bond({ vlanCount: 1 }), eth(), eth({ bonded: false })], want: 'hybrid' },
  {
    name: 'a layer-2 bond with every port bonded is layer2-bonded',
    ports: [bond({ layer2: true, vlanCount: 2 }), eth(), eth()],
    want: 'layer2-bonded',
  },
  {
    name: 'a disbonded layer-2 bond is layer2-individual',
    ports: [bond({ layer2: true, bonded: false }), eth({ bonded: false }), eth({ bonded: false })],
    want: 'layer2-individual',
  },
  { name: 'desired ports may list the bond only', ports: [bond({ layer2: true, bonded: false })], want: 'layer2-individual' },
  {
    name: '4 ports, one bond in layer 2 and one in layer 3, is hybrid',
    ports: [bond(), bond({ layer2: true }), eth(), eth(), eth(), eth()],
    want: 'hybrid',
  },
  { name: 'no bond port: nothing to name', ports: [eth()], want: undefined },
];

describe('deriveNetworkType', () => {
  test.each(cases)('$name', ({ ports, want }) => {
    expect(deriveNetworkType(ports)).toBe(want);
  });
});
