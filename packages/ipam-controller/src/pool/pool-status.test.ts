import { describe, expect, test } from '@jest/globals';
import type { PoolStatus } from '@metal-l2/api';
import { computePoolStatus } from './pool-status.js';

const now = new Date('2026-11-30T12:00:00Z');
const vrfReady = {
  type: 'VRFReady',
  status: 'True' as const,
  reason: 'VRFReady',
  message: 'VRF v',
  lastTransitionTime: '2026-11-30T11:00:00Z',
};
const current: PoolStatus = { vrf: { vrfID: 'v', created: ['VRF'] }, conditions: [vrfReady] };

describe('computePoolStatus and the Metal side', () => {
  test('a VRFReady from the VRF steps is set, and status.vrf is left as the server has it', () => {
    const status = computePoolStatus({
      current,
      state: undefined,
      blocker: { reason: 'VRFNotReady', message: 'MetalAPIError: boom' },
      vrf: { condition: { type: 'VRFReady', status: 'False', reason: 'MetalAPIError', message: 'boom' } },
      generation: 2,
      now,
    });
    expect(status.vrf).toEqual(current.vrf);
    expect(status.conditions).toEqual([
      {
        type: 'Ready',
        status: 'False',
        reason: 'VRFNotReady',
        message: 'MetalAPIError: boom',
        lastTransitionTime: '2026-11-30T12:00:00Z',
        observedGeneration: 2,
      },
      {
        type: 'VRFReady',
        status: 'False',
        reason: 'MetalAPIError',
        message: 'boom',
        lastTransitionTime: '2026-11-30T12:00:00Z',
        observedGeneration: 2,
      },
    ]);
  });

  test("'keep' leaves VRFReady and status.vrf alone (paused, deleting)", () => {
    const status = computePoolStatus({
      current,
      state: undefined,
      blocker: { reason: 'Paused', message: 'held' },
      vrf: 'keep',
      generation: 1,
      now,
    });
    expect(status.vrf).toEqual(current.vrf);
    expect(status.conditions?.find((c) => c.type === 'VRFReady')).toEqual(vrfReady);
  });

  test('a pool without spec.vrf drops both', () => {
    const status = computePoolStatus({
      current,
      state: undefined,
      blocker: undefined,
      vrf: undefined,
      generation: 1,
      now,
    });
    expect(status.vrf).toBeUndefined();
    expect(status.conditions?.map((c) => c.type)).toEqual(['Ready']);
  });
});

describe('computePoolStatus and allocations', () => {
  test('the pool status carries no allocations (they live in blocks); one written before blocks keeps its map until moved', () => {
    const base = { state: undefined, blocker: undefined, vrf: undefined, generation: 1, now };
    expect(computePoolStatus({ ...base, current: undefined }).allocations).toBeUndefined();
    const legacy = { allocations: { '10.0.0.1': 'a' } };
    expect(computePoolStatus({ ...base, current: legacy }).allocations).toEqual(legacy.allocations);
  });
});
