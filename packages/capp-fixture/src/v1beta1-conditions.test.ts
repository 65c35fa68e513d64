import { describe, expect, test } from '@jest/globals';
import { setV1Beta1Condition, summarizeReady } from './v1beta1-conditions.js';

const t0 = new Date('2026-01-01T00:00:00.123Z');
const t1 = new Date('2026-01-01T00:01:00Z');

describe('setV1Beta1Condition', () => {
  test('a False condition carries its severity; the time has seconds precision', () => {
    expect(
      setV1Beta1Condition(
        [],
        { type: 'InstanceReady', state: { status: 'False', reason: 'WaitingForBootstrapData', severity: 'Info', message: '' } },
        t0,
      ),
    ).toEqual([
      {
        type: 'InstanceReady',
        status: 'False',
        reason: 'WaitingForBootstrapData',
        severity: 'Info',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ]);
  });

  test('the same state keeps its time; a new reason moves it (CAPI v1beta1 compares the whole state)', () => {
    const first = setV1Beta1Condition(
      [],
      { type: 'InstanceReady', state: { status: 'False', reason: 'A', severity: 'Info', message: '' } },
      t0,
    );
    expect(
      setV1Beta1Condition(first, { type: 'InstanceReady', state: { status: 'False', reason: 'A', severity: 'Info', message: '' } }, t1),
    ).toEqual(first);
    expect(
      setV1Beta1Condition(first, { type: 'InstanceReady', state: { status: 'False', reason: 'B', severity: 'Info', message: '' } }, t1)[0]
        ?.lastTransitionTime,
    ).toBe('2026-01-01T00:01:00Z');
  });
});

describe('summarizeReady', () => {
  test.each([
    { name: 'nothing to summarise leaves Ready alone', input: [], want: [] },
    {
      name: 'a False InstanceReady makes Ready False with its reason, severity and a step counter',
      input: [
        {
          type: 'InstanceReady',
          status: 'False' as const,
          reason: 'InstanceProvisionStarted',
          severity: 'Info' as const,
          lastTransitionTime: 'x',
        },
      ],
      want: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'InstanceProvisionStarted',
          severity: 'Info',
          message: '0 of 1 completed',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
        { type: 'InstanceReady', status: 'False', reason: 'InstanceProvisionStarted', severity: 'Info', lastTransitionTime: 'x' },
      ],
    },
    {
      name: 'a True InstanceReady makes Ready True',
      input: [{ type: 'InstanceReady', status: 'True' as const, lastTransitionTime: 'x' }],
      want: [
        { type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z' },
        { type: 'InstanceReady', status: 'True', lastTransitionTime: 'x' },
      ],
    },
  ])('$name', ({ input, want }) => {
    expect(summarizeReady(input, t0)).toEqual(want);
  });
});
