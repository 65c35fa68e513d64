import { proceed } from '@metal-l2/kube';
import { describe, expect, test } from '@jest/globals';
import { MetalHttpError } from '@metal-l2/metal-api';
import type { NetworkContext } from '../context.js';
import { afterMetalError, afterMetalFailure, afterMetalWait, metalSucceeded, type MetalStreak } from './port-driver.js';
import { type MachineNetworkScope } from './scope.js';

// The Metal error policy per machine: plain data in, the next StepOutcome out.

function machine(clock: { ms: number }): MachineNetworkScope {
  const ctx: Pick<NetworkContext, 'timings' | 'metalStreaks' | 'now'> = {
    timings: {
      holdTimeoutMs: 300_000,
      provisioningEstimateMs: 600_000,
      batchPollMs: 1_500,
      devicePollMs: 5_000,
      metalRetryMs: 5_000,
      metalRetryMaxMs: 60_000,
      wakeIntervalMs: 15_000,
      driftCheckMs: 600_000,
      bootScriptTimeoutMs: 900_000,
    },
    metalStreaks: new Map<string, MetalStreak>(),
    now: () => new Date(clock.ms),
  };
  return { ctx, namespace: 'ns', name: 'm-0', machineNetwork: { metadata: { uid: 'uid-1' } } } as unknown as MachineNetworkScope;
}

const at = { operation: 'createPortVlanAssignmentBatch', method: 'POST', path: '/ports/p1/vlan-assignments/batches', attempts: 1 };

describe('a machine after Metal failures', () => {
  test('a VLAN batch that keeps failing waits 5 s, 10 s, 20 s, 40 s, then the cap, instead of every 5 s', () => {
    const scope = machine({ ms: 0 });
    const waits = [1, 2, 3, 4, 5, 6].map(() => afterMetalFailure(scope));
    expect(waits.map((w) => (w.kind === 'wait' ? w.afterMs : w.kind))).toEqual([5_000, 10_000, 20_000, 40_000, 60_000, 60_000]);
  });

  test('a Retry-After is the wait, whatever the streak; a wrapped error is found', () => {
    const scope = machine({ ms: 0 });
    afterMetalFailure(scope);
    const err = new Error('drive ports', { cause: new MetalHttpError({ ...at, status: 429, apiErrors: [], retryAfterMs: 60_000 }) });
    expect(afterMetalError(scope, 'configure the ports', err)).toEqual({ kind: 'wait', afterMs: 60_000 });
  });

  test('until the wait is over the Metal step does not run, whatever wakes the machine', async () => {
    const clock = { ms: 1_000 };
    const scope = machine(clock);
    let ran = 0;
    const step = afterMetalWait(() => {
      ran++;
      return Promise.resolve(proceed);
    });
    afterMetalError(scope, 'configure', new MetalHttpError({ ...at, status: 429, apiErrors: [], retryAfterMs: 60_000 }));
    clock.ms += 20_000;
    expect(await step(scope)).toEqual({ kind: 'wait', afterMs: 40_000 });
    expect(ran).toBe(0);
    clock.ms += 40_000;
    expect(await step(scope)).toEqual(proceed);
    expect(ran).toBe(1);
  });

  test('convergence ends the streak: the next failure waits the base delay again', () => {
    const scope = machine({ ms: 0 });
    afterMetalFailure(scope);
    afterMetalFailure(scope);
    metalSucceeded(scope);
    expect(afterMetalFailure(scope)).toEqual({ kind: 'wait', afterMs: 5_000 });
  });

  test('errors that are not Metal answers fail the reconcile, with what was attempted', () => {
    const outcome = afterMetalError(machine({ ms: 0 }), 'read device d1', new Error('the device reports no metro'));
    expect(outcome.kind).toBe('fail');
    expect(outcome.kind === 'fail' && outcome.error instanceof Error ? outcome.error.message : '').toBe('read device d1');
  });
});
