import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { formatAddress, parseAddress } from './address.js';
import { formatIssues } from './issues.js';
import type { IssueCode } from './issues.js';
import type { PoolSpec, ResolvedPool } from './pool-spec.js';
import {
  countAllocatable,
  describeAllocatable,
  findAddressesOutsidePool,
  formatSubnet,
  parseAddressEntry,
  resolvePoolSpec,
  validatePoolSpec,
} from './pool-spec.js';
import { rangesContain } from './range.js';

function resolve(spec: PoolSpec): ResolvedPool {
  const result = resolvePoolSpec(spec);
  if (!result.ok) throw new Error(`expected a valid pool, got: ${formatIssues(result.issues, { root: 'spec' })}`);
  return result.pool;
}

function contains(pool: ResolvedPool, text: string): boolean {
  const address = parseAddress(text);
  if (address === undefined) throw new Error(`bad test address ${text}`);
  return address.family === pool.family && rangesContain(pool.allocatable, address.value);
}

describe('parseAddressEntry', () => {
  // The reference's AddressStrParses / AddressesToIPSet cases (internal/poolutil/pool_test.go).
  test.each([
    { name: 'IPv4 address', input: '192.168.1.2', want: ['192.168.1.2'] },
    { name: 'IPv4 range', input: '192.168.1.2-192.168.1.4', want: ['192.168.1.2-192.168.1.4'] },
    { name: 'IPv4 CIDR with host bits is masked', input: '192.168.1.2/24', want: ['192.168.1.0-192.168.1.255'] },
    { name: 'IPv6 address', input: 'fe80::1', want: ['fe80::1'] },
    { name: 'IPv6 range', input: 'fe80::1-fe80::3', want: ['fe80::1-fe80::3'] },
    { name: 'IPv6 CIDR', input: 'fe80::10/127', want: ['fe80::10-fe80::11'] },
    { name: 'single-address range', input: '10.0.0.5-10.0.0.5', want: ['10.0.0.5'] },
    { name: 'prefix 0', input: '10.0.0.0/0', want: ['0.0.0.0-255.255.255.255'] },
  ])('$name: $input', ({ input, want }) => {
    const entry = parseAddressEntry(input);
    expect(entry).toBeDefined();
    expect(
      describeAllocatable({ family: entry!.family, prefix: 0, subnet: entry!.range, addresses: [], allocatable: [entry!.range] }),
    ).toEqual(want);
  });

  test.each([
    { name: 'five dotted parts', input: '192.168.1.2.4' },
    { name: 'backwards IPv4 range', input: '192.168.1.4-192.168.1.1' },
    { name: 'IPv4 CIDR /33', input: '192.168.1.2/33' },
    { name: 'bad IPv6 group', input: 'fe80::zzzz' },
    { name: 'backwards IPv6 range', input: 'fe80::3-fe80::1' },
    { name: 'IPv6 CIDR /129', input: 'fe80::1/129' },
    { name: 'octet too large', input: '192.168.1.2612' },
    { name: 'trailing hyphen', input: '192.168.1.2-192.168.1.4-' },
    { name: 'three-part range', input: '192.168.1.2-192.168.1.4-192.168.1.9' },
    { name: 'CIDR inside a range', input: '192.168.1.4/21-192.168.1.2' },
    { name: 'empty CIDR bits inside a range', input: '192.168.1.4/-192.168.1.2' },
    { name: 'range across families', input: '10.0.0.1-fe80::1' },
    { name: 'CIDR bits with leading zero', input: '10.0.0.0/024' },
    { name: 'CIDR with sign', input: '10.0.0.0/+24' },
    { name: 'CIDR without bits', input: '10.0.0.0/' },
    { name: 'spaces around the hyphen', input: '10.0.0.1 - 10.0.0.5' },
    { name: 'garbage', input: 'garbage' },
  ])('$name: $input is refused', ({ input }) => {
    expect(parseAddressEntry(input)).toBeUndefined();
  });
});

describe('validatePoolSpec: invalid scenarios (the reference webhook table, plus our own rules)', () => {
  const base = { addresses: ['10.0.0.25', '10.0.0.26', '10.0.0.27'], prefix: 24, gateway: '10.0.0.1' };
  test.each<{ name: string; spec: PoolSpec; want: { code: IssueCode; path: (string | number)[] }[] }>([
    {
      name: 'addresses must be set',
      spec: { addresses: [], prefix: 24, gateway: '10.0.0.1' },
      want: [{ code: 'Required', path: ['addresses'] }],
    },
    { name: 'invalid gateway', spec: { ...base, gateway: 'invalid' }, want: [{ code: 'InvalidAddress', path: ['gateway'] }] },
    {
      name: 'address in a separate subnet',
      spec: { addresses: ['10.0.0.25', '10.0.0.26', '10.0.1.27'], prefix: 24, gateway: '10.0.0.1' },
      want: [{ code: 'OutsidePrefix', path: ['addresses', 2] }],
    },
    {
      name: 'invalid address',
      spec: { addresses: ['10.0.0.25', '10.0.0.26', 'garbage'], prefix: 24, gateway: '10.0.0.1' },
      want: [{ code: 'InvalidAddress', path: ['addresses', 2] }],
    },
    { name: 'negative prefix', spec: { ...base, prefix: -1 }, want: [{ code: 'InvalidPrefix', path: ['prefix'] }] },
    { name: 'prefix beyond 128', spec: { ...base, prefix: 9999 }, want: [{ code: 'InvalidPrefix', path: ['prefix'] }] },
    { name: 'fractional prefix', spec: { ...base, prefix: 24.5 }, want: [{ code: 'InvalidPrefix', path: ['prefix'] }] },
    { name: 'IPv4 prefix longer than 32', spec: { ...base, prefix: 64 }, want: [{ code: 'InvalidPrefix', path: ['prefix'] }] },
    {
      name: 'range out of order',
      spec: { ...base, addresses: ['10.0.0.10-10.0.0.5'] },
      want: [{ code: 'InvalidAddress', path: ['addresses', 0] }],
    },
    {
      name: 'CIDR with invalid prefix',
      spec: { ...base, addresses: ['10.0.0.10/33'] },
      want: [{ code: 'InvalidAddress', path: ['addresses', 0] }],
    },
    {
      name: 'range below the prefix',
      spec: { ...base, addresses: ['10.0.1.0', '10.0.0.10-10.0.0.20'] },
      // The subnet comes from the lowest address (10.0.0.10), so 10.0.1.0 is the one outside.
      want: [{ code: 'OutsidePrefix', path: ['addresses', 0] }],
    },
    {
      name: 'range above the prefix',
      spec: { ...base, addresses: ['10.0.1.0', '10.0.2.10-10.0.2.20'], gateway: '10.0.1.1' },
      want: [{ code: 'OutsidePrefix', path: ['addresses', 1] }],
    },
    {
      name: 'range start below the prefix',
      spec: { ...base, addresses: ['10.0.1.0', '10.0.0.20-10.0.1.20'], gateway: '10.0.0.1' },
      want: [
        { code: 'OutsidePrefix', path: ['addresses', 0] },
        { code: 'OutsidePrefix', path: ['addresses', 1] },
      ],
    },
    {
      name: 'range end above the prefix',
      spec: { ...base, addresses: ['10.0.1.0', '10.0.1.20-10.0.2.20'], gateway: '10.0.1.1' },
      want: [{ code: 'OutsidePrefix', path: ['addresses', 1] }],
    },
    {
      name: 'CIDR below the prefix',
      spec: { ...base, addresses: ['10.0.1.0', '10.0.0.1/24'], gateway: '10.0.0.1' },
      want: [{ code: 'OutsidePrefix', path: ['addresses', 0] }],
    },
    {
      name: 'CIDR above the prefix',
      spec: { ...base, addresses: ['10.0.1.0', '10.0.2.1/24'], gateway: '10.0.1.1' },
      want: [{ code: 'OutsidePrefix', path: ['addresses', 1] }],
    },
    {
      name: 'CIDR start below the prefix',
      spec: { ...base, addresses: ['10.0.1.0', '10.0.0.0/23'], gateway: '10.0.0.1' },
      // The /23 is masked to 10.0.0.0/23, so the subnet is 10.0.0.0/24 and both entries leave it.
      want: [
        { code: 'OutsidePrefix', path: ['addresses', 0] },
        { code: 'OutsidePrefix', path: ['addresses', 1] },
      ],
    },
    {
      name: 'CIDR end above the prefix',
      spec: { ...base, addresses: ['10.0.1.0', '10.0.1.0/23'], gateway: '10.0.0.1' },
      // The /23 is masked to 10.0.0.0/23, so the subnet is 10.0.0.0/24 and both entries leave it.
      want: [
        { code: 'OutsidePrefix', path: ['addresses', 0] },
        { code: 'OutsidePrefix', path: ['addresses', 1] },
      ],
    },
    {
      name: 'IPv4 addresses and IPv6 gateway',
      spec: { addresses: ['10.0.1.0', '10.0.0.2-10.0.0.250'], prefix: 24, gateway: 'fd00::1' },
      want: [{ code: 'GatewayFamilyMismatch', path: ['gateway'] }],
    },
    {
      name: 'IPv6 addresses and IPv4 gateway',
      spec: { addresses: ['fd00::1', 'fd00::100-fd00::200'], prefix: 24, gateway: '10.0.0.1' },
      want: [{ code: 'GatewayFamilyMismatch', path: ['gateway'] }],
    },
    {
      name: 'addresses of mixed families',
      spec: { addresses: ['fd00::1', 'fd00::100-fd00::200', '10.0.1.0', '10.0.0.2-10.0.0.250'], prefix: 24, gateway: '10.0.0.1' },
      want: [{ code: 'MixedFamilies', path: ['addresses'] }],
    },
    {
      name: 'excluded addresses of mixed families',
      spec: { addresses: ['10.0.1.0', '10.0.0.2-10.0.0.250'], prefix: 24, gateway: '10.0.0.1', excludedAddresses: ['fd00::1', '10.0.0.4'] },
      want: [{ code: 'MixedFamilies', path: ['excludedAddresses'] }],
    },
    {
      name: 'addresses and excluded addresses of different families',
      spec: { addresses: ['10.0.1.0', '10.0.0.2-10.0.0.250'], prefix: 24, gateway: '10.0.0.1', excludedAddresses: ['fd00::1'] },
      want: [{ code: 'ExcludedFamilyMismatch', path: ['excludedAddresses'] }],
    },
    {
      name: 'invalid excluded address',
      spec: { ...base, excludedAddresses: ['10.0.0.30', 'nope'] },
      want: [{ code: 'InvalidAddress', path: ['excludedAddresses', 1] }],
    },
    // Beyond the reference: it accepts a gateway outside the subnet (issue #168); we refuse it.
    {
      name: 'gateway outside the subnet',
      spec: { ...base, gateway: '10.0.1.1' },
      want: [{ code: 'GatewayOutsideSubnet', path: ['gateway'] }],
    },
    {
      name: 'IPv6 gateway outside the subnet',
      spec: { addresses: ['fd01::10-fd01::20'], prefix: 120, gateway: 'fd01::1:1' },
      want: [{ code: 'GatewayOutsideSubnet', path: ['gateway'] }],
    },
    {
      name: 'negative grace period',
      spec: { ...base, addressReuseGracePeriodSeconds: -1 },
      want: [{ code: 'InvalidGracePeriod', path: ['addressReuseGracePeriodSeconds'] }],
    },
    {
      name: 'every independent problem is reported at once',
      spec: { addresses: ['garbage'], prefix: -3, gateway: 'nope', excludedAddresses: ['also-nope'] },
      want: [
        { code: 'InvalidPrefix', path: ['prefix'] },
        { code: 'InvalidAddress', path: ['addresses', 0] },
        { code: 'InvalidAddress', path: ['gateway'] },
        { code: 'InvalidAddress', path: ['excludedAddresses', 0] },
      ],
    },
  ])('$name', ({ spec, want }) => {
    const issues = validatePoolSpec(spec);
    expect(issues.map(({ code, path }) => ({ code, path }))).toEqual(want);
    for (const issue of issues) expect(issue.message).toMatch(/^[a-z]/);
  });

  test('messages keep the reference wording', () => {
    const issues = validatePoolSpec({ addresses: ['10.0.0.25', 'garbage', 'fd00::1'], prefix: 24 });
    expect(formatIssues(issues, { root: 'spec' })).toBe(
      'spec.addresses[1]: Invalid value: "garbage": provided address is not a valid IP, range, nor CIDR; ' +
        'spec.addresses: provided addresses are of mixed IP families',
    );
    const outside = validatePoolSpec({ addresses: ['10.0.0.25', '10.0.1.27'], prefix: 24 });
    expect(formatIssues(outside, { root: 'spec' })).toBe(
      'spec.addresses[1]: Invalid value: "10.0.1.27": provided address belongs to a different subnet than others (10.0.0.0/24)',
    );
  });
});

describe('validatePoolSpec: valid pools', () => {
  test.each<{ name: string; spec: PoolSpec }>([
    {
      name: 'prefix /0 (public addresses, reference issue #287)',
      spec: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 0, gateway: '10.0.0.1' },
    },
    {
      name: 'addresses with gateway and prefix',
      spec: { addresses: ['10.0.0.25', '10.0.0.26', '10.0.0.27'], prefix: 28, gateway: '10.0.0.24' },
    },
    { name: 'addresses without gateway', spec: { addresses: ['10.0.0.25', '10.0.0.26', '10.0.0.27'], prefix: 28 } },
    { name: 'empty gateway means none', spec: { addresses: ['10.0.0.25'], prefix: 28, gateway: '' } },
    {
      name: 'excluded addresses outside the addresses',
      spec: { addresses: ['10.0.0.25', '10.0.0.26', '10.0.0.27'], prefix: 28, excludedAddresses: ['10.0.0.23', '10.0.0.24'] },
    },
    {
      name: 'IPv6 addresses with gateway',
      spec: { addresses: ['fe01::2', 'fe01::3-fe01::5', 'fe01::1:1/126'], gateway: 'fe01::1', prefix: 28 },
    },
    {
      name: 'IPv6 excluded mix of forms',
      spec: {
        addresses: ['fe01::2', 'fe01::3-fe01::5', 'fe01::1:1/126'],
        prefix: 28,
        excludedAddresses: ['fe01::4', 'fe01::6-fe01::8', 'fe01::1:10/126'],
      },
    },
    { name: 'overlapping entries are merged', spec: { addresses: ['10.0.0.1-10.0.0.10', '10.0.0.5-10.0.0.15'], prefix: 24 } },
    { name: 'zero grace period', spec: { addresses: ['10.0.0.5'], prefix: 24, addressReuseGracePeriodSeconds: 0 } },
  ])('$name', ({ spec }) => {
    expect(validatePoolSpec(spec)).toEqual([]);
  });
});

describe('resolvePoolSpec: the allocatable set (reference PoolSpecToIPSet cases)', () => {
  test.each<{ name: string; spec: PoolSpec; want: string[]; count: number; absent?: string[] }>([
    {
      name: 'converts a pool spec to a set',
      spec: { gateway: '192.168.0.1', prefix: 24, addresses: ['192.168.0.2', '192.168.0.3-192.168.0.4', '192.168.0.6/31'] },
      want: ['192.168.0.2-192.168.0.4', '192.168.0.6-192.168.0.7'],
      count: 5,
    },
    {
      name: 'excludes the network address',
      spec: { gateway: '192.168.0.1', prefix: 24, addresses: ['192.168.0.0', '192.168.0.3-192.168.0.4', '192.168.0.6/31'] },
      want: ['192.168.0.3-192.168.0.4', '192.168.0.6-192.168.0.7'],
      count: 4,
      absent: ['192.168.0.0'],
    },
    {
      name: 'excludes the broadcast address of the inferred prefix only',
      spec: {
        gateway: '192.168.0.1',
        prefix: 16,
        addresses: ['192.168.1.0', '192.168.0.255', '192.168.0.3-192.168.0.4', '192.168.0.6/31', '192.168.255.255'],
      },
      want: ['192.168.0.3-192.168.0.4', '192.168.0.6-192.168.0.7', '192.168.0.255-192.168.1.0'],
      count: 6,
      absent: ['192.168.255.255'],
    },
    {
      name: 'excludes the gateway',
      spec: { gateway: '192.168.0.1', prefix: 24, addresses: ['192.168.0.1', '192.168.0.3-192.168.0.4', '192.168.0.6/31'] },
      want: ['192.168.0.3-192.168.0.4', '192.168.0.6-192.168.0.7'],
      count: 4,
      absent: ['192.168.0.1'],
    },
    {
      name: 'allocateReservedIPAddresses keeps network and broadcast, never the gateway',
      spec: {
        gateway: '192.168.0.1',
        prefix: 24,
        allocateReservedIPAddresses: true,
        addresses: ['192.168.0.0', '192.168.0.1', '192.168.0.3-192.168.0.4', '192.168.0.6/31', '192.168.0.255'],
      },
      want: ['192.168.0.0', '192.168.0.3-192.168.0.4', '192.168.0.6-192.168.0.7', '192.168.0.255'],
      count: 6,
      absent: ['192.168.0.1'],
    },
    {
      name: 'excluded single addresses',
      spec: {
        gateway: '192.168.0.1',
        prefix: 24,
        addresses: ['192.168.0.0-192.168.0.10'],
        excludedAddresses: ['192.168.0.5', '192.168.0.6', '192.168.0.7'],
      },
      want: ['192.168.0.2-192.168.0.4', '192.168.0.8-192.168.0.10'],
      count: 6,
    },
    {
      name: 'excluded subnet',
      spec: { gateway: '192.168.0.1', prefix: 24, addresses: ['192.168.0.0/24'], excludedAddresses: ['192.168.0.128/25'] },
      want: ['192.168.0.2-192.168.0.127'],
      count: 126,
    },
    {
      name: 'excluded range',
      spec: { gateway: '192.168.0.1', prefix: 24, addresses: ['192.168.0.0/24'], excludedAddresses: ['192.168.0.2-192.168.0.20'] },
      want: ['192.168.0.21-192.168.0.254'],
      count: 234,
    },
    {
      name: 'IPv6: converts a pool spec to a set',
      spec: { gateway: 'fd01::1', prefix: 120, addresses: ['fd01::2', 'fd01::3-fd01::4', 'fd01::6/127'] },
      want: ['fd01::2-fd01::4', 'fd01::6-fd01::7'],
      count: 5,
    },
    {
      name: 'IPv6: excludes the subnet-router anycast address',
      spec: { gateway: 'fd01::1', prefix: 120, addresses: ['fd01::0', 'fd01::3-fd01::4', 'fd01::6/127'] },
      want: ['fd01::3-fd01::4', 'fd01::6-fd01::7'],
      count: 4,
      absent: ['fd01::'],
    },
    {
      name: 'IPv6: has no broadcast, the last address is allocatable',
      spec: { gateway: 'fd01::1', prefix: 112, addresses: ['fd01::ffff', 'fd01::3-fd01::4', 'fd01::6/127'] },
      want: ['fd01::3-fd01::4', 'fd01::6-fd01::7', 'fd01::ffff'],
      count: 5,
    },
    {
      name: 'IPv6: excludes the gateway',
      spec: { gateway: 'fd01::1', prefix: 120, addresses: ['fd01::1', 'fd01::3-fd01::4', 'fd01::6/127'] },
      want: ['fd01::3-fd01::4', 'fd01::6-fd01::7'],
      count: 4,
    },
    {
      name: 'IPv6: allocateReservedIPAddresses keeps the anycast address, never the gateway',
      spec: {
        gateway: 'fd01::1',
        prefix: 120,
        allocateReservedIPAddresses: true,
        addresses: ['fd01::0', 'fd01::1', 'fd01::3-fd01::4', 'fd01::6/127'],
      },
      want: ['fd01::', 'fd01::3-fd01::4', 'fd01::6-fd01::7'],
      count: 5,
    },
    {
      name: 'checklist 14: gateway inside the range is skipped',
      spec: { addresses: ['10.0.0.1-10.0.0.254'], prefix: 24, gateway: '10.0.0.2' },
      want: ['10.0.0.1', '10.0.0.3-10.0.0.254'],
      count: 253,
    },
    {
      name: 'checklist 14: network excluded, only .1 left',
      spec: { addresses: ['10.0.0.0-10.0.0.1'], prefix: 24, gateway: '10.0.0.2' },
      want: ['10.0.0.1'],
      count: 1,
    },
    {
      name: 'checklist 14: IPv6 last address of a /120 is allocatable',
      spec: { addresses: ['fe80::ffff'], prefix: 120, gateway: 'fe80::ff0a' },
      want: ['fe80::ffff'],
      count: 1,
    },
    {
      name: 'a /32 pool is empty unless allocateReservedIPAddresses (as in the reference)',
      spec: { addresses: ['10.0.0.5'], prefix: 32 },
      want: [],
      count: 0,
    },
    {
      name: 'a /32 pool with allocateReservedIPAddresses holds its address',
      spec: { addresses: ['10.0.0.5'], prefix: 32, allocateReservedIPAddresses: true },
      want: ['10.0.0.5'],
      count: 1,
    },
    {
      name: 'prefix 0 removes 0.0.0.0 and 255.255.255.255 only',
      spec: { addresses: ['0.0.0.0-0.0.0.2', '255.255.255.254-255.255.255.255'], prefix: 0 },
      want: ['0.0.0.1-0.0.0.2', '255.255.255.254'],
      count: 3,
    },
  ])('$name', ({ spec, want, count, absent }) => {
    const pool = resolve(spec);
    expect(describeAllocatable(pool)).toEqual(want);
    expect(countAllocatable(pool)).toBe(BigInt(count));
    for (const address of absent ?? []) expect(contains(pool, address)).toBe(false);
  });

  test('the subnet comes from the lowest address', () => {
    const pool = resolve({ addresses: ['10.0.0.200-10.0.0.210', '10.0.0.20'], prefix: 24, gateway: '10.0.0.1' });
    expect(formatSubnet(pool)).toBe('10.0.0.0/24');
    expect(pool.gateway).toBe(parseAddress('10.0.0.1')!.value);
  });

  test('property: allocatable ⊆ addresses, and never the gateway, an excluded, network or broadcast address', () => {
    // A /24 with random entries, exclusions and gateway: enough to hit every removal rule.
    const host = fc.integer({ min: 0, max: 255 });
    const entry = fc.oneof(
      host.map((h) => `10.9.8.${h}`),
      fc.tuple(host, host).map(([a, b]) => `10.9.8.${Math.min(a, b)}-10.9.8.${Math.max(a, b)}`),
      fc.tuple(host, fc.integer({ min: 24, max: 32 })).map(([h, p]) => `10.9.8.${h}/${p}`),
    );
    const spec = fc.record({
      addresses: fc.array(entry, { minLength: 1, maxLength: 5 }),
      excludedAddresses: fc.array(entry, { maxLength: 3 }),
      gateway: fc.option(
        host.map((h) => `10.9.8.${h}`),
        { nil: undefined },
      ),
      allocateReservedIPAddresses: fc.boolean(),
    });
    fc.assert(
      fc.property(spec, (s) => {
        const result = resolvePoolSpec({ ...s, prefix: 24 });
        expect(result.ok).toBe(true);
        if (!result.ok) return;
        const pool = result.pool;
        const excluded = s.excludedAddresses.map((text) => parseAddressEntry(text)!.range);
        for (let h = 0; h <= 255; h++) {
          const text = `10.9.8.${h}`;
          const value = parseAddress(text)!.value;
          if (!contains(pool, text)) continue;
          expect(rangesContain(pool.addresses, value)).toBe(true);
          expect(text).not.toBe(s.gateway);
          expect(excluded.some((range) => range.start <= value && value <= range.end)).toBe(false);
          if (!s.allocateReservedIPAddresses) expect([0, 255]).not.toContain(h);
        }
      }),
    );
  });
});

describe('findAddressesOutsidePool', () => {
  test('lists held addresses the pool can no longer hold (shrinking below allocations)', () => {
    const pool = resolve({ addresses: ['10.0.0.15-10.0.0.20'], prefix: 24, gateway: '10.0.0.1' });
    const held = ['10.0.0.10', '10.0.0.15', '10.0.0.1', 'fd00::1'].map((text) => parseAddress(text)!);
    expect(findAddressesOutsidePool(pool, held).map(formatAddress)).toEqual(['10.0.0.10', '10.0.0.1', 'fd00::1']);
  });
});
