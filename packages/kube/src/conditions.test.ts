import { describe, expect, test } from '@jest/globals';
import { formatTime, getCondition, isFalse, isTrue, setCondition, setConditions, type Condition } from './conditions.js';

const t0 = new Date('2025-01-01T10:00:00.123Z');
const t1 = new Date('2025-01-01T10:05:00.999Z');

describe('setCondition', () => {
  test('a new condition gets the current time, in seconds precision', () => {
    const out = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'PoolNotReady', message: 'waiting' }, t0);
    expect(out).toEqual([
      { type: 'Ready', status: 'False', reason: 'PoolNotReady', message: 'waiting', lastTransitionTime: '2025-01-01T10:00:00Z' },
    ]);
  });

  test('a new reason or message without a status flip keeps lastTransitionTime', () => {
    const before = setCondition([], { type: 'Ready', status: 'False', reason: 'PoolNotReady', message: 'a' }, t0);
    const after = setCondition(
      before,
      { type: 'Ready', status: 'False', reason: 'PoolExhausted', message: 'b', observedGeneration: 3 },
      t1,
    );
    expect(after).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: 'PoolExhausted',
        message: 'b',
        lastTransitionTime: '2025-01-01T10:00:00Z',
        observedGeneration: 3,
      },
    ]);
  });

  test('a status flip moves lastTransitionTime', () => {
    const before = setCondition([], { type: 'Ready', status: 'False', reason: 'PoolNotReady', message: '' }, t0);
    const after = setCondition(before, { type: 'Ready', status: 'True', reason: 'AddressAllocated', message: '' }, t1);
    expect(getCondition(after, 'Ready')?.lastTransitionTime).toBe('2025-01-01T10:05:00Z');
  });

  test('Ready comes first and the rest sort by type, whatever the insertion order', () => {
    const a = setConditions(
      [],
      [
        { type: 'VRFReady', status: 'True', reason: 'R', message: '' },
        { type: 'Ready', status: 'True', reason: 'R', message: '' },
        { type: 'AddressesAllocated', status: 'True', reason: 'R', message: '' },
      ],
      t0,
    );
    expect(a.map((c) => c.type)).toEqual(['Ready', 'AddressesAllocated', 'VRFReady']);
    const b = setConditions(
      [],
      [
        { type: 'AddressesAllocated', status: 'True', reason: 'R', message: '' },
        { type: 'Ready', status: 'True', reason: 'R', message: '' },
        { type: 'VRFReady', status: 'True', reason: 'R', message: '' },
      ],
      t0,
    );
    expect(b).toEqual(a);
  });

  test('setting the same condition again yields an equal list (no spurious status writes)', () => {
    const input = { type: 'Ready', status: 'True', reason: 'AddressAllocated', message: 'ok' } as const;
    const once = setCondition([], input, t0);
    expect(setCondition(once, input, t1)).toEqual(once);
  });

  test('does not modify its input', () => {
    const input: Condition[] = [{ type: 'Ready', status: 'False', reason: 'A', message: '', lastTransitionTime: '2024-01-01T00:00:00Z' }];
    const copy = structuredClone(input);
    setCondition(input, { type: 'Ready', status: 'True', reason: 'B', message: '' }, t1);
    expect(input).toEqual(copy);
  });
});

describe('condition lookups', () => {
  const list = setConditions(
    [],
    [
      { type: 'Ready', status: 'True', reason: 'R', message: '' },
      { type: 'VRFReady', status: 'False', reason: 'R', message: '' },
    ],
    t0,
  );
  test.each([
    ['Ready', true, false],
    ['VRFReady', false, true],
    ['Missing', false, false],
  ])('%s: isTrue=%s isFalse=%s', (type, wantTrue, wantFalse) => {
    expect(isTrue(list, type)).toBe(wantTrue);
    expect(isFalse(list, type)).toBe(wantFalse);
  });

  test('formatTime drops milliseconds', () => {
    expect(formatTime(t1)).toBe('2025-01-01T10:05:00Z');
  });
});
