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

describe('computePoolStatus and what a move or a restore leaves', () => {
  const base = { state: undefined, blocker: undefined, vrf: undefined, generation: 1, now };
  const movedOut = { type: 'AddressesMovedOut', status: 'True' as const, reason: 'ClaimsLeftWithoutRelease', message: '1 address' };

  test('the block count is recorded beside the layout; a reuse hold stays while it lasts and goes once over', () => {
    const layout = { blocks: { size: 1024, namespace: 'ns' } };
    expect(computePoolStatus({ ...base, current: layout, blockCount: 3 }).blocks).toEqual({ size: 1024, namespace: 'ns', count: 3 });
    expect(computePoolStatus({ ...base, current: { ...layout, reuseHeldUntil: '2026-11-30T12:00:01Z' } }).reuseHeldUntil).toBe(
      '2026-11-30T12:00:01Z',
    );
    expect(computePoolStatus({ ...base, current: { ...layout, reuseHeldUntil: '2026-11-30T12:00:00Z' } }).reuseHeldUntil).toBeUndefined();
  });

  test('AddressesMovedOut is set, kept as it is, or dropped', () => {
    const withIt = computePoolStatus({ ...base, current: undefined, movedOut });
    expect(withIt.conditions?.map((c) => [c.type, c.status])).toEqual([
      ['Ready', 'True'],
      ['AddressesMovedOut', 'True'],
    ]);
    expect(computePoolStatus({ ...base, current: withIt, movedOut: 'keep' }).conditions).toEqual(withIt.conditions);
    expect(computePoolStatus({ ...base, current: withIt }).conditions?.map((c) => c.type)).toEqual(['Ready']);
  });
});
