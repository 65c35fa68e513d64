import { describe, expect, test } from '@jest/globals';
import { ManualClock } from './clock.js';

describe('ManualClock', () => {
  test('runs due tasks in order, each at its due time, including tasks scheduled on the way', () => {
    const clock = new ManualClock(0);
    const seen: string[] = [];
    clock.schedule(20, () => seen.push(`b@${clock.now()}`));
    clock.schedule(10, () => {
      seen.push(`a@${clock.now()}`);
      clock.schedule(5, () => seen.push(`c@${clock.now()}`));
    });
    const cancel = clock.schedule(15, () => seen.push('cancelled'));
    cancel();
    clock.advance(19);
    expect(seen).toEqual(['a@10', 'c@15']);
    expect(clock.now()).toBe(19);
    clock.advance(1);
    expect(seen).toEqual(['a@10', 'c@15', 'b@20']);
    expect(clock.pendingCount()).toBe(0);
  });
});
