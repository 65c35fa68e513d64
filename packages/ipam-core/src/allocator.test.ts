import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { formatAddress, parseAddress } from './address.js';
import type { Address } from './address.js';
import { allocate, countUsed, createAllocationState, freeAddresses, isAllocated, isFree, nextFree, releaseAddresses } from './allocator.js';
import type { AllocationResult, AllocationState } from './allocator.js';
import { parseAddressEntry, resolvePoolSpec } from './pool-spec.js';
import type { PoolSpec, ResolvedPool } from './pool-spec.js';
import { normalizeRanges, rangesContain } from './range.js';

const ip = (text: string): Address => {
  const address = parseAddress(text);
  if (address === undefined) throw new Error(`bad test address ${text}`);
  return address;
};

function resolve(spec: PoolSpec): ResolvedPool {
  const result = resolvePoolSpec(spec);
  if (!result.ok) throw new Error('invalid test pool');
  return result.pool;
}

function stateFor(spec: PoolSpec, used: readonly string[] = []): AllocationState {
  const pool = resolve(spec);
  return createAllocationState({ family: pool.family, allocatable: pool.allocatable, used: used.map(ip) });
}

function show(state: AllocationState, result: AllocationResult): string {
  switch (result.kind) {
    case 'allocated':
      return formatAddress({ family: state.family, value: result.address });
    case 'exhausted':
      return 'exhausted';
    case 'requested-address-taken':
      return `taken ${formatAddress({ family: state.family, value: result.address })}`;
    case 'requested-address-not-in-pool':
      return `not-in-pool ${formatAddress(result.address)}`;
  }
}

function allocateLowest(state: AllocationState, count: number): { state: AllocationState; addresses: string[] } {
  const outcome = allocate(
    state,
    Array.from({ length: count }, () => ({})),
  );
  return { state: outcome.state, addresses: outcome.results.map((result) => show(state, result)) };
}

describe('nextFree (the reference FindFreeAddress cases)', () => {
  test.each([
    { name: 'single range, nothing used: its first address', addresses: ['10.0.0.10-10.0.0.20'], used: [], want: '10.0.0.10' },
    { name: 'single range, some used', addresses: ['10.0.0.10-10.0.0.20'], used: ['10.0.0.10', '10.0.0.11'], want: '10.0.0.12' },
    { name: 'only the last address free', addresses: ['10.0.0.10-10.0.0.20'], used: rangeTexts('10.0.0', 10, 19), want: '10.0.0.20' },
    { name: 'range full', addresses: ['10.0.0.10-10.0.0.20'], used: rangeTexts('10.0.0', 10, 20), want: undefined },
    { name: 'range of one address', addresses: ['10.0.1.10'], used: [], want: '10.0.1.10' },
    { name: 'range of one address, used', addresses: ['10.0.1.10'], used: ['10.0.1.10'], want: undefined },
    {
      name: 'first range full: next range',
      addresses: ['10.0.0.10-10.0.0.15', '10.0.0.20'],
      used: rangeTexts('10.0.0', 10, 15),
      want: '10.0.0.20',
    },
    {
      name: 'all ranges full',
      addresses: ['10.0.0.10-10.0.0.15', '10.0.0.20'],
      used: [...rangeTexts('10.0.0', 10, 15), '10.0.0.20'],
      want: undefined,
    },
    {
      name: 'a hole in the used run',
      addresses: ['10.0.0.10-10.0.0.20'],
      used: ['10.0.0.10', '10.0.0.11', '10.0.0.13'],
      want: '10.0.0.12',
    },
    {
      name: 'used addresses outside the pool do not matter',
      addresses: ['10.0.0.10-10.0.0.20'],
      used: ['10.0.0.9', '10.0.0.21'],
      want: '10.0.0.10',
    },
  ])('$name', ({ addresses, used, want }) => {
    const state = stateFor({ addresses, prefix: 24, allocateReservedIPAddresses: true }, used);
    const next = nextFree(state);
    expect(next === undefined ? undefined : formatAddress({ family: 4, value: next })).toBe(want);
  });

  test('from: the first free address at or after a given one', () => {
    const state = stateFor({ addresses: ['10.0.0.10-10.0.0.20', '10.0.0.30-10.0.0.31'], prefix: 24 }, ['10.0.0.15', '10.0.0.16']);
    expect(nextFree(state, ip('10.0.0.15').value)).toBe(ip('10.0.0.17').value);
    expect(nextFree(state, ip('10.0.0.21').value)).toBe(ip('10.0.0.30').value);
    expect(nextFree(state, ip('10.0.0.32').value)).toBeUndefined();
  });

  test('a /16 filled from the bottom is one used run', () => {
    const state = stateFor({ addresses: ['10.1.0.0/16'], prefix: 16 }, []);
    const filled = allocate(
      state,
      Array.from({ length: 60_000 }, () => ({})),
    ).state;
    expect(filled.used).toHaveLength(1);
    expect(countUsed(filled)).toBe(60_000n);
    // 10.1.0.0 is the network address, so 60,000 addresses end at 10.1.234.96; next is .97.
    expect(formatAddress({ family: 4, value: nextFree(filled)! })).toBe('10.1.234.97');
  });
});

describe('allocate', () => {
  const pool: PoolSpec = { addresses: ['10.0.0.1-10.0.0.254'], prefix: 24, gateway: '10.0.0.2' };

  test('checklist 14: lowest free, gateway skipped', () => {
    expect(allocateLowest(stateFor(pool), 3).addresses).toEqual(['10.0.0.1', '10.0.0.3', '10.0.0.4']);
  });

  test('a batch larger than the pool: the rest is exhausted', () => {
    const small = stateFor({ addresses: ['10.0.0.10-10.0.0.12'], prefix: 24 }, ['10.0.0.11']);
    expect(allocateLowest(small, 4).addresses).toEqual(['10.0.0.10', '10.0.0.12', 'exhausted', 'exhausted']);
  });

  test('requested addresses are served before lowest-free ones in the same batch', () => {
    const state = stateFor(pool, ['10.0.0.1']);
    const outcome = allocate(state, [{}, { requestedAddress: ip('10.0.0.3') }, {}, { requestedAddress: ip('10.0.0.3') }]);
    expect(outcome.results.map((result) => show(state, result))).toEqual(['10.0.0.4', '10.0.0.3', '10.0.0.5', 'taken 10.0.0.3']);
    expect(isAllocated(outcome.state, ip('10.0.0.3').value)).toBe(true);
  });

  test.each([
    { name: 'used address', requested: '10.0.0.1', want: 'taken 10.0.0.1' },
    { name: 'the gateway', requested: '10.0.0.2', want: 'not-in-pool 10.0.0.2' },
    { name: 'the network address', requested: '10.0.0.0', want: 'not-in-pool 10.0.0.0' },
    { name: 'the broadcast address', requested: '10.0.0.255', want: 'not-in-pool 10.0.0.255' },
    { name: 'outside the pool', requested: '10.0.1.5', want: 'not-in-pool 10.0.1.5' },
    { name: 'another family', requested: '::a00:5', want: 'not-in-pool ::a00:5' },
    { name: 'free address', requested: '10.0.0.200', want: '10.0.0.200' },
  ])('requested address: $name', ({ requested, want }) => {
    const state = stateFor(pool, ['10.0.0.1']);
    const outcome = allocate(state, [{ requestedAddress: ip(requested) }]);
    expect(outcome.results.map((result) => show(state, result))).toEqual([want]);
  });

  test('nothing allocated: the state is returned unchanged', () => {
    const full = stateFor({ addresses: ['10.0.0.10'], prefix: 24 }, ['10.0.0.10']);
    expect(allocate(full, [{}]).state).toBe(full);
  });

  test('states are immutable values', () => {
    const state = stateFor(pool);
    const before = JSON.stringify(state, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
    allocate(state, [{}, {}]);
    releaseAddresses(state, [ip('10.0.0.1').value]);
    expect(JSON.stringify(state, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))).toBe(before);
  });

  test('IPv6 pools work the same way', () => {
    const state = stateFor({ addresses: ['fd01::/120'], prefix: 120, gateway: 'fd01::1' });
    expect(allocateLowest(state, 3).addresses).toEqual(['fd01::2', 'fd01::3', 'fd01::4']);
  });

  test('other-family used addresses are tolerated and never collide', () => {
    const state = createAllocationState({ family: 4, allocatable: resolve(pool).allocatable, used: [ip('::a00:1')] });
    expect(state.otherFamilyCount).toBe(1);
    expect(allocateLowest(state, 1).addresses).toEqual(['10.0.0.1']);
  });
});

describe('releaseAddresses', () => {
  test('release then allocate gives the address back', () => {
    const { state } = allocateLowest(stateFor({ addresses: ['10.0.0.10-10.0.0.20'], prefix: 24 }), 5);
    const released = releaseAddresses(state, [ip('10.0.0.12').value]);
    expect(isFree(released, ip('10.0.0.12').value)).toBe(true);
    expect(allocateLowest(released, 2).addresses).toEqual(['10.0.0.12', '10.0.0.15']);
  });

  test('unknown addresses are ignored', () => {
    const state = stateFor({ addresses: ['10.0.0.10-10.0.0.20'], prefix: 24 }, ['10.0.0.10']);
    expect(releaseAddresses(state, [ip('10.0.0.11').value]).used).toEqual(state.used);
    expect(releaseAddresses(state, [])).toBe(state);
  });
});

// A few small pools with every removal rule in play: exclusions, gateway, network/broadcast, gaps.
const pools: PoolSpec[] = [
  { addresses: ['10.0.0.0/26'], prefix: 24, gateway: '10.0.0.1', excludedAddresses: ['10.0.0.10-10.0.0.14', '10.0.0.30'] },
  { addresses: ['10.0.0.250-10.0.0.255', '10.0.0.0-10.0.0.8', '10.0.0.100/30'], prefix: 24, gateway: '10.0.0.101' },
  { addresses: ['fd00::/122'], prefix: 120, gateway: 'fd00::3f', excludedAddresses: ['fd00::20/124'] },
  { addresses: ['192.168.7.0/27'], prefix: 27, allocateReservedIPAddresses: true, gateway: '192.168.7.1' },
];

function forbidden(spec: PoolSpec): { gateway: bigint | undefined; excluded: readonly { start: bigint; end: bigint }[] } {
  return {
    gateway: spec.gateway === undefined ? undefined : ip(spec.gateway).value,
    excluded: normalizeRanges((spec.excludedAddresses ?? []).map((text) => parseAddressEntry(text)!.range)),
  };
}

const step = fc.oneof(
  fc.record({ kind: fc.constant('allocate' as const), count: fc.integer({ min: 1, max: 20 }) }),
  fc.record({ kind: fc.constant('request' as const), offset: fc.integer({ min: 0, max: 80 }) }),
  fc.record({ kind: fc.constant('release' as const), picks: fc.array(fc.nat(), { maxLength: 10 }) }),
);

describe('properties', () => {
  test('no address is ever held twice, and never the gateway, an excluded or an out-of-pool one', () => {
    fc.assert(
      fc.property(fc.constantFrom(...pools), fc.array(step, { maxLength: 30 }), (spec, steps) => {
        const pool = resolve(spec);
        const { gateway, excluded } = forbidden(spec);
        let state = createAllocationState({ family: pool.family, allocatable: pool.allocatable, used: [] });
        const held = new Set<bigint>();
        for (const s of steps) {
          if (s.kind === 'release') {
            const list = [...held];
            const gone = s.picks.map((p) => list[p % Math.max(1, list.length)]).filter((v): v is bigint => v !== undefined);
            state = releaseAddresses(state, gone);
            for (const v of gone) held.delete(v);
            continue;
          }
          const requests =
            s.kind === 'allocate'
              ? Array.from({ length: s.count }, () => ({}))
              : [{ requestedAddress: { family: pool.family, value: (pool.addresses[0]?.start ?? 0n) + BigInt(s.offset) } }];
          const outcome = allocate(state, requests);
          for (const result of outcome.results) {
            if (result.kind !== 'allocated') continue;
            const v = result.address;
            expect(held.has(v)).toBe(false);
            expect(rangesContain(pool.allocatable, v)).toBe(true);
            expect(rangesContain(pool.addresses, v)).toBe(true);
            expect(v).not.toBe(gateway);
            expect(rangesContain(excluded, v)).toBe(false);
            held.add(v);
          }
          state = outcome.state;
        }
        expect(countUsed(state)).toBe(BigInt(held.size));
      }),
    );
  });

  test('release then allocate gives the address back', () => {
    fc.assert(
      fc.property(fc.constantFrom(...pools), fc.integer({ min: 1, max: 40 }), fc.nat(), fc.boolean(), (spec, count, pick, byName) => {
        const pool = resolve(spec);
        const start = createAllocationState({ family: pool.family, allocatable: pool.allocatable, used: [] });
        const first = allocate(
          start,
          Array.from({ length: count }, () => ({})),
        );
        const taken = first.results.flatMap((result) => (result.kind === 'allocated' ? [result.address] : []));
        const victim = taken[pick % taken.length];
        if (victim === undefined) return;
        const released = releaseAddresses(first.state, [victim]);
        // Everything below the victim is still held (lowest-free from an empty pool), so the
        // lowest free address is the victim again; asking for it by name works too.
        const again = allocate(released, [byName ? { requestedAddress: { family: pool.family, value: victim } } : {}]);
        expect(again.results).toEqual([{ kind: 'allocated', address: victim }]);
      }),
    );
  });

  test('model-based: the allocator behaves like a plain Set over the pool', () => {
    type Model = { held: Set<bigint>; free: bigint[] };
    type Real = { state: AllocationState };
    const lowestFree = (m: Model, n: number): bigint[] => m.free.filter((v) => !m.held.has(v)).slice(0, n);

    class AllocateCommand implements fc.Command<Model, Real> {
      constructor(readonly count: number) {}
      check(): boolean {
        return true;
      }
      run(m: Model, r: Real): void {
        const want = lowestFree(m, this.count);
        const outcome = allocate(
          r.state,
          Array.from({ length: this.count }, () => ({})),
        );
        const got = outcome.results.flatMap((result) => (result.kind === 'allocated' ? [result.address] : []));
        expect(got).toEqual(want);
        expect(outcome.results.filter((result) => result.kind === 'exhausted')).toHaveLength(this.count - want.length);
        for (const v of want) m.held.add(v);
        r.state = outcome.state;
      }
      toString(): string {
        return `allocate(${this.count})`;
      }
    }
    class RequestCommand implements fc.Command<Model, Real> {
      constructor(readonly value: bigint) {}
      check(): boolean {
        return true;
      }
      run(m: Model, r: Real): void {
        const outcome = allocate(r.state, [{ requestedAddress: { family: r.state.family, value: this.value } }]);
        const inPool = m.free.includes(this.value);
        const want: AllocationResult = !inPool
          ? { kind: 'requested-address-not-in-pool', address: { family: r.state.family, value: this.value } }
          : m.held.has(this.value)
            ? { kind: 'requested-address-taken', address: this.value }
            : { kind: 'allocated', address: this.value };
        expect(outcome.results).toEqual([want]);
        if (want.kind === 'allocated') m.held.add(this.value);
        r.state = outcome.state;
      }
      toString(): string {
        return `request(${this.value})`;
      }
    }
    class ReleaseCommand implements fc.Command<Model, Real> {
      constructor(readonly pick: number) {}
      check(m: Readonly<Model>): boolean {
        return m.held.size > 0;
      }
      run(m: Model, r: Real): void {
        const list = [...m.held].sort((a, b) => (a < b ? -1 : 1));
        const v = list[this.pick % list.length] as bigint;
        m.held.delete(v);
        r.state = releaseAddresses(r.state, [v]);
        expect(isAllocated(r.state, v)).toBe(false);
      }
      toString(): string {
        return `release(#${this.pick})`;
      }
    }
    class CheckCommand implements fc.Command<Model, Real> {
      check(): boolean {
        return true;
      }
      run(m: Model, r: Real): void {
        expect(nextFree(r.state)).toBe(lowestFree(m, 1)[0]);
        expect([...freeAddresses(r.state)]).toEqual(lowestFree(m, Number.MAX_SAFE_INTEGER));
        expect(countUsed(r.state)).toBe(BigInt(m.held.size));
      }
      toString(): string {
        return 'check';
      }
    }

    fc.assert(
      fc.property(
        fc.constantFrom(...pools),
        fc.commands(
          [
            fc.integer({ min: 1, max: 12 }).map((n) => new AllocateCommand(n)),
            fc.integer({ min: -2, max: 70 }).map((offset) => new RequestCommand(BigInt(offset))),
            fc.nat().map((pick) => new ReleaseCommand(pick)),
            fc.constant(new CheckCommand()),
          ],
          { maxCommands: 60 },
        ),
        (spec, commands) => {
          const pool = resolve(spec);
          const base = pool.addresses[0]?.start ?? 0n;
          const free: bigint[] = [];
          for (const range of pool.allocatable) for (let v = range.start; v <= range.end; v++) free.push(v);
          // Requests are offsets from the pool's first address, so they hit and miss the pool.
          const shifted = [...commands].map((command) =>
            command instanceof RequestCommand ? new RequestCommand(base + command.value) : command,
          );
          fc.modelRun(
            () => ({
              model: { held: new Set<bigint>(), free },
              real: { state: createAllocationState({ family: pool.family, allocatable: pool.allocatable, used: [] }) },
            }),
            shifted,
          );
        },
      ),
    );
  });
});

function rangeTexts(prefix: string, from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => `${prefix}.${from + i}`);
}
