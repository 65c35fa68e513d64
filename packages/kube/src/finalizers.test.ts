import { describe, expect, test } from '@jest/globals';
import { finalizersWith, finalizersWithout, hasFinalizer } from './finalizers.js';

describe('finalizer lists', () => {
  const obj = { metadata: { name: 'a', finalizers: ['x', 'ours'] } };

  test('add keeps the others and says when there is nothing to add', () => {
    expect(finalizersWith({ metadata: { name: 'a' } }, 'ours')).toEqual(['ours']);
    expect(finalizersWith({ metadata: { name: 'a', finalizers: ['x'] } }, 'ours')).toEqual(['x', 'ours']);
    expect(finalizersWith(obj, 'ours')).toBeUndefined();
  });

  test('remove keeps the others and says when there is nothing to remove', () => {
    expect(finalizersWithout(obj, 'ours')).toEqual(['x']);
    expect(finalizersWithout(obj, 'other')).toBeUndefined();
    expect(hasFinalizer(obj, 'ours')).toBe(true);
    expect(hasFinalizer({ metadata: {} }, 'ours')).toBe(false);
  });
});
