import { describe, expect, test } from '@jest/globals';
import { resolvePoolSpec, type ResolvedPool } from '@metal-l2/ipam-core';
import { addressOf, firstUsableAddress, isSameSubnet, isSubnetInRanges, poolSubnet, reservationSizeProblem } from './subnet.js';

function resolved(addresses: string[], prefix: number): ResolvedPool {
  const result = resolvePoolSpec({ addresses, prefix });
  if (!result.ok) throw new Error('test pool is invalid');
  return result.pool;
}

describe('poolSubnet', () => {
  test('is the network of the lowest address with the pool prefix', () => {
    expect(poolSubnet(resolved(['10.60.1.20-10.60.1.40'], 24))).toMatchObject({
      family: 4,
      network: '10.60.1.0',
      cidr: 24,
      text: '10.60.1.0/24',
    });
    expect(poolSubnet(resolved(['fd00:1:2:3::10-fd00:1:2:3::20'], 64))).toMatchObject({
      family: 6,
      network: 'fd00:1:2:3::',
      text: 'fd00:1:2:3::/64',
    });
  });
});

describe('reservationSizeProblem', () => {
  test.each([
    { name: 'an IPv4 /24 fits', family: 4 as const, cidr: 24, fits: true },
    { name: 'an IPv4 /22 fits', family: 4 as const, cidr: 22, fits: true },
    { name: 'an IPv4 /29 fits', family: 4 as const, cidr: 29, fits: true },
    { name: 'an IPv4 /21 is too large', family: 4 as const, cidr: 21, fits: false },
    { name: 'an IPv4 /30 is too small', family: 4 as const, cidr: 30, fits: false },
    { name: 'an IPv6 /64 fits', family: 6 as const, cidr: 64, fits: true },
    { name: 'an IPv6 /80 does not', family: 6 as const, cidr: 80, fits: false },
  ])('$name', ({ family, cidr, fits }) => {
    expect(reservationSizeProblem({ family, cidr }) === undefined).toBe(fits);
  });
});

describe('isSubnetInRanges', () => {
  const subnet = poolSubnet(resolved(['10.60.1.10-10.60.1.20'], 24));
  test.each([
    { name: 'inside a /16', ranges: ['10.60.0.0/16'], inside: true },
    { name: 'equal to the range', ranges: ['10.60.1.0/24'], inside: true },
    { name: 'inside the second range', ranges: ['192.168.0.0/16', '10.0.0.0/8'], inside: true },
    { name: 'outside every range', ranges: ['10.61.0.0/16'], inside: false },
    { name: 'larger than the range', ranges: ['10.60.1.0/25'], inside: false },
    { name: 'only an IPv6 range', ranges: ['fd00::/64'], inside: false },
    { name: 'no ranges', ranges: [], inside: false },
    { name: 'garbage', ranges: ['not-a-cidr'], inside: false },
  ])('$name', ({ ranges, inside }) => {
    expect(isSubnetInRanges(subnet, ranges)).toBe(inside);
  });
});

describe('addresses Metal hands back', () => {
  test('a gateway_address with a prefix and one without read the same', () => {
    expect(addressOf('10.60.1.1/24')).toBe('10.60.1.1');
    expect(addressOf('10.60.1.1')).toBe('10.60.1.1');
    expect(addressOf('garbage')).toBeUndefined();
    expect(addressOf(undefined)).toBeUndefined();
  });

  test('the first usable address follows the network address', () => {
    expect(firstUsableAddress(poolSubnet(resolved(['10.60.1.10'], 24)))).toBe('10.60.1.1');
  });

  test('a reservation is the subnet whatever the spelling', () => {
    const subnet = poolSubnet(resolved(['fd00:0:0:1::5'], 64));
    expect(isSameSubnet(subnet, { network: 'fd00:0000:0000:0001::', cidr: 64 })).toBe(true);
    expect(isSameSubnet(subnet, { network: 'fd00:0:0:1::', cidr: 65 })).toBe(false);
  });
});
