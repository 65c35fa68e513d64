import { describe, expect, test } from '@jest/globals';
import { failed, proceed, runSteps, waitFor, type Step } from './steps.js';

describe('runSteps', () => {
  test('runs every step while they continue, and stops at the first that does not', async () => {
    const ran: string[] = [];
    const step =
      (name: string, outcome = proceed): Step<string[]> =>
      (log) => {
        log.push(name);
        return Promise.resolve(outcome);
      };
    expect(await runSteps(ran, [step('a'), step('b')])).toEqual(proceed);
    expect(ran).toEqual(['a', 'b']);
    ran.length = 0;
    expect(await runSteps(ran, [step('a'), step('b', waitFor(5)), step('c')])).toEqual({ kind: 'wait', afterMs: 5 });
    expect(ran).toEqual(['a', 'b']);
    const error = new Error('boom');
    expect(await runSteps(ran, [step('x', failed(error))])).toEqual({ kind: 'fail', error });
  });
});
