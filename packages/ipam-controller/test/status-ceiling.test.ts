import { describe, expect, test } from '@jest/globals';
import { InClusterIPPoolType, type IPPool } from '@metal-l2/api';
import { encodeAllocations, formatAddress, type Allocation } from '@metal-l2/ipam-core';
import { KubeClient, KubeApiError } from '@metal-l2/kube';
import { kinds, poolObject } from '@metal-l2/test-support/objects';
import { DEFAULT_STATUS_BUDGET_BYTES, allocationCost } from '../src/pool/status-budget.js';
import { useIpamNamespace } from './support/ipam-namespace.js';

// The ceiling docs/ipam-provider.md gives, measured on the real API server: a pool's status is
// filled the way the controller fills it (status merge patches under its field manager, the same
// codec) until the server stops keeping managedFields and then refuses the object. Shows that the
// default budget sits below both, and that the controller's per-allocation cost matches what the
// server stores. Prints the figures.
const space = useIpamNamespace('ipam-ceiling');

interface Ceiling {
  /** Allocations when the stored object (managedFields included) reaches the default budget. */
  readonly atBudget: number;
  /** Stored bytes per allocation, as measured. */
  readonly bytesPerAllocation: number;
  /** The largest gap, per allocation, between what the server stored and what the controller charges. */
  readonly worstChargeError: number;
  /** Last count at which the server still kept managedFields, and the first at which it dropped them. */
  readonly managedFieldsKeptUpTo: number;
  /** Last count the server accepted, and its stored size then. */
  readonly acceptedUpTo: number;
  readonly largestAcceptedBytes: number;
}

async function measureCeiling(name: string, claimNameLength: number, step: number): Promise<Ceiling> {
  const client = KubeClient.fromKubeConfig(space.kc, { fieldManager: 'metal-l2-ipam-controller' });
  await space.objects.create(kinds.pool, poolObject(name, { addresses: ['10.216.0.0/16'], prefix: 16 }, space.ns));
  const claim = (i: number): string => {
    const suffix = `-${i}`;
    return `${'m'.repeat(claimNameLength - suffix.length)}${suffix}`;
  };
  let count = 0;
  let previous = { count: 0, bytes: 0 };
  let atBudget = 0;
  let bytesPerAllocation = 0;
  let worstChargeError = 0;
  let managedFieldsKeptUpTo = 0;
  let largestAcceptedBytes = 0;
  for (;;) {
    const batch: Allocation[] = Array.from({ length: step }, (_, j) => ({
      address: formatAddress({ family: 4, value: 0x0ad80000n + BigInt(count + j + 1) }),
      claim: { name: claim(count + j) },
    }));
    let written: IPPool;
    try {
      written = await client.patchStatus<IPPool>(
        InClusterIPPoolType,
        { namespace: space.ns, name },
        { status: { allocations: encodeAllocations(batch) } },
      );
    } catch (err: unknown) {
      if (err instanceof KubeApiError && /too large/.test(err.message)) break;
      throw err;
    }
    count += step;
    const bytes = Buffer.byteLength(JSON.stringify(written));
    const kept = written.metadata.managedFields !== undefined;
    if (kept) {
      managedFieldsKeptUpTo = count;
      if (previous.count > 0) {
        bytesPerAllocation = (bytes - previous.bytes) / step;
        const charged = batch.reduce((sum, a) => sum + allocationCost(a, { reservesReleaseMark: false }), 0) / step;
        worstChargeError = Math.max(worstChargeError, Math.abs(bytesPerAllocation - charged));
      }
      if (atBudget === 0 && bytes >= DEFAULT_STATUS_BUDGET_BYTES) {
        atBudget = Math.floor(previous.count + (DEFAULT_STATUS_BUDGET_BYTES - previous.bytes) / ((bytes - previous.bytes) / step));
      }
    }
    largestAcceptedBytes = bytes;
    previous = { count, bytes };
  }
  return { atBudget, bytesPerAllocation, worstChargeError, managedFieldsKeptUpTo, acceptedUpTo: count, largestAcceptedBytes };
}

describe('the pool status ceiling on the real API server', () => {
  test.each([
    { names: 'typical 40-character claim names', length: 40, step: 1_000 },
    { names: 'worst-case 253-character claim names', length: 253, step: 250 },
  ])(
    '$names: the default budget is reached before the server drops managedFields or refuses the object',
    async ({ length, step }) => {
      const ceiling = await measureCeiling(`ceiling-${length}`, length, step);
      process.stderr.write(
        `ceiling with ${length}-character claim names: ${JSON.stringify({ ...ceiling, defaultBudgetBytes: DEFAULT_STATUS_BUDGET_BYTES })}\n`,
      );
      // What the controller charges per allocation is what the server stores (±1 byte on average).
      expect(ceiling.worstChargeError).toBeLessThanOrEqual(1);
      // The default budget holds allocations, and the server still stores such an object whole.
      expect(ceiling.atBudget).toBeGreaterThan(0);
      expect(ceiling.managedFieldsKeptUpTo).toBeGreaterThan(ceiling.atBudget);
      expect(ceiling.acceptedUpTo).toBeGreaterThan(ceiling.atBudget);
    },
    240_000,
  );
});
