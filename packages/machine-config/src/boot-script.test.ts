import { describe, expect, test } from '@jest/globals';
import { BOOT_SCRIPT } from './boot-script.js';
import { FORBIDDEN_IN_PART } from './inject.js';

describe('the boot script text', () => {
  test('a POSIX sh script', () => {
    expect(BOOT_SCRIPT).toMatch(/^#!\/bin\/sh\n/);
    expect(BOOT_SCRIPT).toContain('main "$@"\n');
  });

  test.each(FORBIDDEN_IN_PART.map((bad) => ({ bad })))('never contains $bad', ({ bad }) => {
    expect(BOOT_SCRIPT).not.toContain(bad);
  });

  test('no dollar-brace (it is written as String.raw) and no append redirection', () => {
    expect(BOOT_SCRIPT).not.toContain('$' + '{');
    expect(BOOT_SCRIPT).not.toMatch(/>>/);
  });

  test('posts the three user-state codes', () => {
    expect(BOOT_SCRIPT).toContain('post_state running 1001 "metal-l2: metadata captured');
    expect(BOOT_SCRIPT).toContain('post_state succeeded 1002 "metal-l2: network configured:$mapping"');
    expect(BOOT_SCRIPT).toContain('post_state failed 1099 "metal-l2: $1"');
  });
});
