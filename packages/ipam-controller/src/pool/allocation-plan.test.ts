import { describe, expect, test } from '@jest/globals';
import type { IPAddressClaim } from '@metal-l2/api';
import { resolvePoolSpec, type Allocation, type ResolvedPool } from '@metal-l2/ipam-core';
import { viewClaim, type ClaimView } from '../claim/claim-contract.js';
import { planAllocations, type AllocationPlanInput } from './allocation-plan.js';

const now = new Date('2026-11-30T10:00:00Z');

function pool(spec: { addresses: string[]; prefix: number; gateway?: string }): ResolvedPool {
  const result = resolvePoolSpec(spec);
  if (!result.ok) throw new Error('bad test pool');
  return result.pool;
}

function claim(name: string, extra: { namespace?: string; deleting?: boolean; requested?: string } = {}): ClaimView {
  const object: IPAddressClaim = {
    metadata: {
      name,
      namespace: extra.namespace ?? 'ns',
      uid: `uid-${name}`,
      ...(extra.deleting === true ? { deletionTimestamp: '2026-11-30T09:00:00Z' } : {}),
      ...(extra.requested === undefined ? {} : { annotations: { 'ipam.metal.x-k8s.io/requested-address': extra.requested } }),
      finalizers: ['ipam.metal.x-k8s.io/release-address'],
    },
    spec: { poolRef: { apiGroup: 'ipam.metal.x-k8s.io', kind: 'InClusterIPPool', name: 'p' } },
  };
  return viewClaim(object);
}

function input(overrides: Partial<AllocationPlanInput>): AllocationPlanInput {
  return {
    isGlobal: false,
    pool: pool({ addresses: ['10.0.0.1-10.0.0.254'], prefix: 24, gateway: '10.0.0.2' }),
    allocations: [],
    claims: [],
    heldClaims: [],
    releasable: [],
    addresses: [],
    canAllocate: true,
    gracePeriodSeconds: 0,
    now,
    ...overrides,
  };
}

const bound = (plan: ReturnType<typeof planAllocations>): Record<string, string> =>
  Object.fromEntries(plan.decisions.filter((d) => d.kind === 'bound').map((d) => [d.claim.name, d.kind === 'bound' ? d.address : '']));

describe('planAllocations', () => {
  test('a claim held in two blocks keeps the address its IPAddress has; the other entry is dropped and reused', () => {
    const allocations: Allocation[] = [
      { address: '10.0.0.5', claim: { name: 'a' } },
      { address: '10.0.0.20', claim: { name: 'a' } },
    ];
    const ip = { namespace: 'ns', name: 'a', claimName: 'a', address: '10.0.0.20' };
    const plan = planAllocations(input({ allocations, addresses: [ip], claims: [claim('a'), claim('b')] }));
    expect(plan.changed).toBe(true);
    expect(bound(plan)).toEqual({ a: '10.0.0.20', b: '10.0.0.1' });
    expect(plan.allocations.filter((x) => x.claim.name === 'a').map((x) => x.address)).toEqual(['10.0.0.20']);
    expect(plan.conflicts).toEqual([]);
    expect(plan).toMatchObject({ duplicatesDropped: 1, duplicatesPending: 0 });
  });

  test('a claim held in two blocks without an IPAddress keeps both entries (neither goes to another claim) and binds to the first', () => {
    const allocations: Allocation[] = [
      { address: '10.0.0.1', claim: { name: 'a' } },
      { address: '10.0.0.3', claim: { name: 'a' } },
    ];
    const plan = planAllocations(input({ allocations, claims: [claim('a'), claim('b')] }));
    expect(bound(plan)).toEqual({ a: '10.0.0.1', b: '10.0.0.4' });
    expect(plan.allocations.filter((x) => x.claim.name === 'a')).toHaveLength(2);
    // The pass that creates a's IPAddress must be followed by one that reads it.
    expect(plan).toMatchObject({ duplicatesDropped: 0, duplicatesPending: 1 });
  });

  test('new claims get the lowest free addresses in order, skipping the gateway', () => {
    const plan = planAllocations(input({ claims: [claim('a'), claim('b'), claim('c')] }));
    expect(bound(plan)).toEqual({ a: '10.0.0.1', b: '10.0.0.3', c: '10.0.0.4' });
    expect(plan.changed).toBe(true);
    expect(plan.newlyAllocated).toBe(3);
  });

  test('a claim that holds an address keeps it and nothing changes', () => {
    const allocations: Allocation[] = [{ address: '10.0.0.9', claim: { name: 'a' } }];
    const plan = planAllocations(input({ allocations, claims: [claim('a')] }));
    expect(bound(plan)).toEqual({ a: '10.0.0.9' });
    expect(plan.changed).toBe(false);
  });

  test('status lost (clusterctl move): allocations are rebuilt from IPAddresses before new ones', () => {
    const plan = planAllocations(
      input({
        claims: [claim('a'), claim('new')],
        addresses: [{ namespace: 'ns', name: 'a', claimName: 'a', address: '10.0.0.1' }],
      }),
    );
    expect(plan.recovered).toBe(1);
    expect(bound(plan)).toEqual({ a: '10.0.0.1', new: '10.0.0.3' });
  });

  test('an IPAddress whose address status gives to another claim is reported, not taken', () => {
    const plan = planAllocations(
      input({
        allocations: [{ address: '10.0.0.1', claim: { name: 'a' } }],
        claims: [claim('a'), claim('b')],
        addresses: [{ namespace: 'ns', name: 'b', claimName: 'b', address: '10.0.0.1' }],
      }),
    );
    expect(plan.conflicts).toHaveLength(1);
    expect(bound(plan)['a']).toBe('10.0.0.1');
    expect(bound(plan)['b']).not.toBe('10.0.0.1');
  });

  test('a deleting claim whose IPAddress is gone is released and its address is reused at once without grace', () => {
    const leaving = claim('a', { deleting: true });
    const plan = planAllocations(
      input({ allocations: [{ address: '10.0.0.1', claim: { name: 'a' } }], claims: [leaving, claim('b')], releasable: [leaving] }),
    );
    expect(plan.released.map((c) => c.name)).toEqual(['a']);
    expect(bound(plan)).toEqual({ b: '10.0.0.1' });
  });

  test('with a grace period the released address is held until it ends, then handed out', () => {
    const leaving = claim('a', { deleting: true });
    const first = planAllocations(
      input({
        allocations: [{ address: '10.0.0.1', claim: { name: 'a' } }],
        claims: [leaving, claim('b')],
        releasable: [leaving],
        gracePeriodSeconds: 30,
      }),
    );
    expect(first.released.map((c) => c.name)).toEqual(['a']);
    expect(bound(first)).toEqual({ b: '10.0.0.3' });
    expect(first.nextExpiryInMs).toBe(30_000);
    const later = planAllocations(
      input({
        allocations: first.allocations,
        claims: [claim('b'), claim('c')],
        gracePeriodSeconds: 30,
        now: new Date(now.getTime() + 30_000),
      }),
    );
    expect(bound(later)).toEqual({ b: '10.0.0.3', c: '10.0.0.1' });
  });

  test('an allocation whose claim vanished is released; a paused claim keeps its address', () => {
    const plan = planAllocations(
      input({
        allocations: [
          { address: '10.0.0.1', claim: { name: 'gone' } },
          { address: '10.0.0.3', claim: { name: 'paused' } },
        ],
        heldClaims: [claim('paused')],
        claims: [claim('new')],
      }),
    );
    expect(plan.allocations.map((a) => a.address).sort()).toEqual(['10.0.0.1', '10.0.0.3']);
    expect(bound(plan)).toEqual({ new: '10.0.0.1' });
  });

  test('a controller watching one namespace never releases a global pool address held in another', () => {
    const plan = planAllocations(
      input({
        isGlobal: true,
        watchNamespace: 'mine',
        allocations: [{ address: '10.0.0.1', claim: { namespace: 'theirs', name: 'c' } }],
        claims: [],
      }),
    );
    expect(plan.changed).toBe(false);
    expect(plan.allocations).toHaveLength(1);
  });

  test('k free addresses and k+1 claims: exactly one claim is exhausted', () => {
    const plan = planAllocations(
      input({ pool: pool({ addresses: ['10.0.0.10-10.0.0.12'], prefix: 24 }), claims: ['a', 'b', 'c', 'd'].map((n) => claim(n)) }),
    );
    expect(Object.keys(bound(plan))).toHaveLength(3);
    expect(plan.decisions.filter((d) => d.kind === 'exhausted').map((d) => d.claim.name)).toEqual(['d']);
  });

  test.each([
    { name: 'a free requested address is given', requested: '10.0.0.50', want: { kind: 'bound', address: '10.0.0.50' } },
    { name: 'the gateway cannot be requested', requested: '10.0.0.2', want: { kind: 'failed' } },
    { name: 'an address outside the pool cannot be requested', requested: '192.168.0.1', want: { kind: 'failed' } },
    { name: 'text that is no address fails', requested: 'ten', want: { kind: 'failed' } },
  ])('requested address: $name', ({ requested, want }) => {
    const plan = planAllocations(input({ claims: [claim('a', { requested })] }));
    expect(plan.decisions[0]).toMatchObject(want);
  });

  test('a requested address another claim holds fails with a message naming it', () => {
    const plan = planAllocations(
      input({ allocations: [{ address: '10.0.0.5', claim: { name: 'x' } }], claims: [claim('x'), claim('a', { requested: '10.0.0.5' })] }),
    );
    const decision = plan.decisions.find((d) => d.claim.name === 'a');
    expect(decision).toMatchObject({ kind: 'failed', message: 'requested address 10.0.0.5 is already allocated' });
  });

  test('global pool: same claim name in two namespaces gets two addresses', () => {
    const plan = planAllocations(input({ isGlobal: true, claims: [claim('c', { namespace: 'n1' }), claim('c', { namespace: 'n2' })] }));
    const addresses = plan.decisions.map((d) => (d.kind === 'bound' ? d.address : ''));
    expect(new Set(addresses).size).toBe(2);
    expect(plan.allocations.map((a) => a.claim.namespace).sort()).toEqual(['n1', 'n2']);
  });

  test('a pool that is not ready allocates nothing and says so', () => {
    const plan = planAllocations(input({ canAllocate: false, claims: [claim('a')] }));
    expect(plan.decisions).toEqual([expect.objectContaining({ kind: 'not-ready' })]);
    expect(plan.changed).toBe(false);
  });

  test('a global pool keeps the allocation of a claim that left unreleased (and rebuilds it from its IPAddress); a vanished one is released', () => {
    const allocations: Allocation[] = [
      { address: '10.0.0.5', claim: { namespace: 'a', name: 'moved' } },
      { address: '10.0.0.6', claim: { namespace: 'a', name: 'gone' } },
    ];
    const rebuilt = { namespace: 'a', name: 'lost', claimName: 'lost', address: '10.0.0.7' };
    const plan = planAllocations(
      input({
        isGlobal: true,
        allocations,
        addresses: [rebuilt],
        leftClaims: [
          { namespace: 'a', name: 'moved' },
          { namespace: 'a', name: 'lost' },
        ],
        claims: [claim('new', { namespace: 'b' })],
      }),
    );
    expect(plan.allocations.map((a) => [a.address, a.claim.name])).toEqual([
      ['10.0.0.5', 'moved'],
      ['10.0.0.7', 'lost'],
      ['10.0.0.1', 'new'],
    ]);
    expect(plan.recovered).toBe(1);
  });
});
