import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { formatAddress } from './address.js';
import type { Allocation } from './allocation.js';
import { decodeAllocations, encodeAllocations, encodedEntryBytes } from './status-codec.js';

const MiB = 1024 * 1024;

/**
 * Claim names shaped like the ones the network controller creates: the PacketMachine name
 * (cluster, pool, two 5-character hashes) plus port and VLAN, 36 characters.
 */
function realisticAllocations(count: number, namespace?: string): Allocation[] {
  const hash = (n: number): string => n.toString(36).padStart(5, '0').slice(-5);
  return Array.from({ length: count }, (_, i) => ({
    address: formatAddress({ family: 4, value: 0x0a400000n + BigInt(i + 2) }),
    claim: { ...(namespace === undefined ? {} : { namespace }), name: `prod-eu-md-0-${hash(i * 7919)}-${hash(i * 104729)}-bond0-1000` },
  }));
}

const claimName = fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,40}[a-z0-9])?$/);
const namespace = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);
const timestamp = fc.integer({ min: 0, max: 4_000_000_000 }).map((seconds) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z'));
const address = fc.oneof(
  fc.bigInt({ min: 0n, max: 2n ** 32n - 1n }).map((value) => formatAddress({ family: 4, value })),
  fc.bigInt({ min: 0n, max: 2n ** 128n - 1n }).map((value) => formatAddress({ family: 6, value })),
);
const allocation = fc.record({
  address,
  claim: fc.record({ namespace: fc.option(namespace, { nil: undefined }), name: claimName }),
  releasedAt: fc.option(timestamp, { nil: undefined }),
});
const allocationList = fc.uniqueArray(allocation, { selector: (a) => a.address, maxLength: 30 });

describe('encodeAllocations', () => {
  test('a map from address to [namespace/]claim[@releasedAt], keys in byte order', () => {
    const encoded = encodeAllocations([
      { address: '10.0.0.2', claim: { name: 'b' } },
      { address: '10.0.0.10', claim: { namespace: 'team-a', name: 'a' } },
      { address: '10.0.0.9', claim: { name: 'c' }, releasedAt: '2025-01-02T03:04:05Z' },
    ]);
    expect(JSON.stringify(encoded)).toBe('{"10.0.0.10":"team-a/a","10.0.0.2":"b","10.0.0.9":"c@2025-01-02T03:04:05Z"}');
  });

  test.each<{ name: string; allocation: Allocation }>([
    { name: 'non-canonical address', allocation: { address: 'FD00::1', claim: { name: 'a' } } },
    { name: 'not an address', allocation: { address: '10.0.0.0/24', claim: { name: 'a' } } },
    { name: 'name with a slash', allocation: { address: '10.0.0.1', claim: { name: 'a/b' } } },
    { name: 'name with an at sign', allocation: { address: '10.0.0.1', claim: { name: 'a@b' } } },
    { name: 'empty name', allocation: { address: '10.0.0.1', claim: { name: '' } } },
    { name: 'namespace with a dot', allocation: { address: '10.0.0.1', claim: { namespace: 'a.b', name: 'a' } } },
    {
      name: 'timestamp with milliseconds',
      allocation: { address: '10.0.0.1', claim: { name: 'a' }, releasedAt: '2025-01-02T03:04:05.123Z' },
    },
  ])('refuses to write what it could not read back: $name', ({ allocation }) => {
    expect(() => encodeAllocations([allocation])).toThrow(RangeError);
  });

  test('refuses a duplicate address (it would be a double allocation)', () => {
    expect(() =>
      encodeAllocations([
        { address: '10.0.0.1', claim: { name: 'a' } },
        { address: '10.0.0.1', claim: { name: 'b' } },
      ]),
    ).toThrow(/allocated twice/);
  });
});

describe('decodeAllocations', () => {
  test('absent status decodes to no allocations', () => {
    expect(decodeAllocations(undefined)).toEqual({ allocations: [], issues: [] });
    expect(decodeAllocations(null)).toEqual({ allocations: [], issues: [] });
  });

  test('sorted numerically, IPv4 before IPv6', () => {
    const { allocations, issues } = decodeAllocations({ 'fd00::1': 'x', '10.0.0.10': 'b', '10.0.0.9': 'team-a/a@2025-01-02T03:04:05Z' });
    expect(issues).toEqual([]);
    expect(allocations).toEqual([
      { address: '10.0.0.9', claim: { namespace: 'team-a', name: 'a' }, releasedAt: '2025-01-02T03:04:05Z' },
      { address: '10.0.0.10', claim: { name: 'b' } },
      { address: 'fd00::1', claim: { name: 'x' } },
    ]);
  });

  test.each([
    { name: 'not a map', input: ['10.0.0.1=a'], want: [{ code: 'InvalidAllocation', path: [] }], kept: [] },
    {
      name: 'key is not an address',
      input: { '10.0.0.256': 'a', '10.0.0.1': 'b' },
      want: [{ code: 'InvalidAllocation', path: ['10.0.0.256'] }],
      kept: ['10.0.0.1'],
    },
    { name: 'value is not a string', input: { '10.0.0.1': 5 }, want: [{ code: 'InvalidAllocation', path: ['10.0.0.1'] }], kept: [] },
    { name: 'value has two slashes', input: { '10.0.0.1': 'a/b/c' }, want: [{ code: 'InvalidAllocation', path: ['10.0.0.1'] }], kept: [] },
    {
      name: 'value has a bad timestamp',
      input: { '10.0.0.1': 'a@yesterday' },
      want: [{ code: 'InvalidAllocation', path: ['10.0.0.1'] }],
      kept: [],
    },
    {
      name: 'two spellings of one address keep the first key',
      input: { 'FD00::1': 'a', 'fd00::1': 'b' },
      want: [{ code: 'DuplicateAllocation', path: ['fd00::1'] }],
      kept: ['fd00::1=a'],
    },
  ])('hand-edited status: $name', ({ input, want, kept }) => {
    const { allocations, issues } = decodeAllocations(input);
    expect(issues.map(({ code, path }) => ({ code, path }))).toEqual(want);
    expect(allocations.map((a) => (kept.some((k) => k.includes('=')) ? `${a.address}=${a.claim.name}` : a.address))).toEqual(kept);
  });
});

describe('round trip and stability', () => {
  test('property: the codec decodes what it encodes', () => {
    fc.assert(
      fc.property(allocationList, (list) => {
        const encoded = encodeAllocations(list);
        const { allocations, issues } = decodeAllocations(JSON.parse(JSON.stringify(encoded)));
        expect(issues).toEqual([]);
        const byAddress = (a: Allocation, b: Allocation): number => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0);
        const normalize = (a: Allocation): Allocation => ({
          address: a.address,
          claim: a.claim.namespace === undefined ? { name: a.claim.name } : a.claim,
          ...(a.releasedAt === undefined ? {} : { releasedAt: a.releasedAt }),
        });
        expect([...allocations].sort(byAddress)).toEqual(list.map(normalize).sort(byAddress));
      }),
    );
  });

  test('property: same allocations in any order give the same bytes, and re-encoding is a no-op', () => {
    fc.assert(
      fc.property(
        allocationList.chain((list) => fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length }))),
        ([list, shuffled]) => {
          const bytes = JSON.stringify(encodeAllocations(list));
          expect(JSON.stringify(encodeAllocations(shuffled))).toBe(bytes);
          expect(JSON.stringify(encodeAllocations(decodeAllocations(JSON.parse(bytes)).allocations))).toBe(bytes);
        },
      ),
    );
  });
});

describe('size', () => {
  test('16,384 allocations of a namespaced pool stay well under 1 MiB of JSON', () => {
    const bytes = Buffer.byteLength(JSON.stringify({ allocations: encodeAllocations(realisticAllocations(16_384)) }));
    expect(bytes).toBeLessThan(0.9 * MiB);
  });

  test('16,384 allocations of a global pool (namespace in every entry) stay under 1 MiB, well under 1.5 MiB', () => {
    const bytes = Buffer.byteLength(JSON.stringify({ allocations: encodeAllocations(realisticAllocations(16_384, 'default')) }));
    expect(bytes).toBeLessThan(1 * MiB);
  });

  test('property: encodedEntryBytes sums to the JSON of the map (less its braces and last comma)', () => {
    fc.assert(
      fc.property(allocationList, (list) => {
        const bytes = Buffer.byteLength(JSON.stringify(encodeAllocations(list)));
        const sum = list.reduce((total, a) => total + encodedEntryBytes(a), 0);
        expect(sum).toBe(list.length === 0 ? 0 : bytes - 2 + 1);
      }),
    );
  });
});
