import { describe, expect, test } from '@jest/globals';
import { BlockPool, containsCidr, formatAddress, formatCidr, isAligned, netmask, overlaps, parseAddress, parseCidr } from './ip-math.js';

function cidr(text: string) {
  const c = parseCidr(text);
  if (c === undefined) throw new Error(`bad test cidr ${text}`);
  return c;
}

describe('ip-math', () => {
  test.each([
    ['10.0.0.1', '10.0.0.1'],
    ['2001:db8::1', '2001:db8::1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['::', '::'],
    ['2604:1380:4600::', '2604:1380:4600::'],
    ['1:0:0:1:0:0:0:1', '1:0:0:1::1'],
  ])('parses and formats %s as %s', (input, want) => {
    const a = parseAddress(input);
    expect(a === undefined ? undefined : formatAddress(a.family, a.value)).toBe(want);
  });

  test.each(['10.0.0', '10.0.0.256', '1::2::3', 'x::', '1:2:3:4:5:6:7:8:9', ''])('rejects %s', (input) => {
    expect(parseAddress(input)).toBeUndefined();
  });

  test('alignment, containment and overlap', () => {
    expect(isAligned(cidr('10.0.0.0/16'))).toBe(true);
    expect(isAligned(cidr('10.0.1.0/16'))).toBe(false);
    expect(containsCidr(cidr('10.0.0.0/16'), cidr('10.0.5.0/24'))).toBe(true);
    expect(containsCidr(cidr('10.0.0.0/16'), cidr('10.1.0.0/24'))).toBe(false);
    expect(containsCidr(cidr('10.0.0.0/24'), cidr('10.0.0.0/16'))).toBe(false);
    expect(overlaps(cidr('10.0.0.0/23'), cidr('10.0.1.0/24'))).toBe(true);
    expect(overlaps(cidr('10.0.0.0/24'), cidr('10.0.1.0/24'))).toBe(false);
    expect(overlaps(cidr('10.0.0.0/8'), cidr('2001:db8::/32'))).toBe(false);
  });

  test('netmasks', () => {
    expect(netmask(4, 24)).toBe('255.255.255.0');
    expect(netmask(4, 31)).toBe('255.255.255.254');
    expect(netmask(6, 64)).toBe('ffff:ffff:ffff:ffff::');
  });

  test('a block pool hands out aligned, never-repeating blocks until it is used up', () => {
    const pool = new BlockPool(cidr('192.0.2.0/28'));
    const got = [pool.allocate(31), pool.allocate(29), pool.allocate(31)].map((b) => (b === undefined ? 'none' : formatCidr(b)));
    expect(got).toEqual(['192.0.2.0/31', '192.0.2.8/29', 'none']);
  });
});
