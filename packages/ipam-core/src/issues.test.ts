import { describe, expect, test } from '@jest/globals';
import { formatIssue, formatIssuePath, formatIssues } from './issues.js';
import type { Issue } from './issues.js';

describe('formatIssuePath', () => {
  test.each([
    { name: 'empty path without root', path: [], root: undefined, want: '' },
    { name: 'root only', path: [], root: 'spec', want: 'spec' },
    { name: 'field and index', path: ['addresses', 2], root: 'spec', want: 'spec.addresses[2]' },
    { name: 'no root', path: ['gateway'], root: undefined, want: 'gateway' },
    { name: 'map key with dots is bracketed', path: ['allocations', '10.0.0.1'], root: 'status', want: 'status.allocations["10.0.0.1"]' },
  ])('$name', ({ path, root, want }) => {
    expect(formatIssuePath(path, root === undefined ? {} : { root })).toBe(want);
  });
});

describe('formatIssue', () => {
  const invalid: Issue = {
    code: 'InvalidAddress',
    path: ['addresses', 1],
    message: 'provided address is not a valid IP, range, nor CIDR',
    value: 'garbage',
  };
  const mixed: Issue = { code: 'MixedFamilies', path: ['addresses'], message: 'provided addresses are of mixed IP families' };

  test('like an API server field error', () => {
    expect(formatIssue(invalid, { root: 'spec' })).toBe(
      'spec.addresses[1]: Invalid value: "garbage": provided address is not a valid IP, range, nor CIDR',
    );
    expect(formatIssue(mixed)).toBe('addresses: provided addresses are of mixed IP families');
    expect(formatIssue({ code: 'InvalidAllocation', path: [], message: 'allocations must be a map' })).toBe('allocations must be a map');
  });

  test('several issues in one condition message', () => {
    expect(formatIssues([invalid, mixed], { root: 'spec' })).toBe(
      'spec.addresses[1]: Invalid value: "garbage": provided address is not a valid IP, range, nor CIDR; spec.addresses: provided addresses are of mixed IP families',
    );
  });
});
