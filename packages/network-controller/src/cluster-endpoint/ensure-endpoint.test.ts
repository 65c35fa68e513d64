import { describe, expect, test } from '@jest/globals';
import { virtualRouterIdOf } from './ensure-endpoint.js';

describe('virtualRouterIdOf', () => {
  test('stays in 1-255, is stable for a UID, and spreads over UIDs', () => {
    const ids = Array.from({ length: 500 }, (_, i) => virtualRouterIdOf(`5a7b1c2d-0000-4000-8000-${String(i).padStart(12, '0')}`));
    expect(Math.min(...ids)).toBeGreaterThanOrEqual(1);
    expect(Math.max(...ids)).toBeLessThanOrEqual(255);
    expect(virtualRouterIdOf('uid-1')).toBe(virtualRouterIdOf('uid-1'));
    expect(new Set(ids).size).toBeGreaterThan(150);
  });
});
