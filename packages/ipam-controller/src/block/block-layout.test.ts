import { describe, expect, test } from '@jest/globals';
import {
  DEFAULT_BLOCK_SIZE,
  MAX_BLOCK_SIZE,
  WORST_ENTRY_BYTES,
  blockCidr,
  blockIndexOf,
  blockName,
  groupByBlock,
  maxBlockSizeFor,
} from './block-layout.js';
import { DEFAULT_STATUS_BUDGET_BYTES } from '../pool/status-budget.js';

describe('block layout', () => {
  test('an address belongs to the block of its aligned sub-range, whatever the pool', () => {
    // 10.0.4.0 is 0x0a000400: with 1,024-address blocks it is block 0x28001.
    expect(blockIndexOf(0x0a000400n, 1024)).toBe(0x28001n);
    expect(blockIndexOf(0x0a0007ffn, 1024)).toBe(0x28001n);
    expect(blockIndexOf(0x0a000800n, 1024)).toBe(0x28002n);
    expect(blockCidr(4, 0x28001n, 1024)).toBe('10.0.4.0/22');
    expect(blockCidr(4, blockIndexOf(0x0a000013n, 16), 16)).toBe('10.0.0.16/28');
    expect(blockCidr(6, blockIndexOf(0x20010db8000000000000000000000001n, 1024), 1024)).toBe('2001:db8::/118');
    expect(blockName('uid', 0x28001n)).toBe(`uid-${0x28001}`);
  });

  test('allocations are grouped by block name', () => {
    const groups = groupByBlock(
      [
        { address: '10.0.0.1', claim: { name: 'a' } },
        { address: '10.0.0.17', claim: { name: 'b' } },
        { address: '10.0.0.18', claim: { name: 'c' } },
      ],
      { poolUid: 'p', size: 16 },
    );
    expect([...groups.entries()].map(([name, g]) => [name, g.allocations.map((a) => a.claim.name)])).toEqual([
      [blockName('p', 0x0a00000n), ['a']],
      [blockName('p', 0x0a00001n), ['b', 'c']],
    ]);
  });

  test('the default block size fits the default budget with the longest entries; the largest allowed one too', () => {
    expect(maxBlockSizeFor(DEFAULT_STATUS_BUDGET_BYTES)).toBe(MAX_BLOCK_SIZE);
    expect(DEFAULT_BLOCK_SIZE * WORST_ENTRY_BYTES).toBeLessThan(DEFAULT_STATUS_BUDGET_BYTES / 2);
    // A budget of 64 KiB fits 128 of the longest entries, not 256.
    expect(maxBlockSizeFor(65_536)).toBe(128);
  });
});
