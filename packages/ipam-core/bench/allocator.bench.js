// Micro-benchmark of the allocation core, over the built package (run `npx tsc -b packages/ipam-core`
// first): node packages/ipam-core/bench/allocator.bench.js
// Prints per-operation times; it asserts nothing (DESIGN §5: targets are measured, not timed tests).
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import {
  allocate,
  createAllocationState,
  decodeAllocations,
  encodeAllocations,
  formatAddress,
  nextFree,
  resolvePoolSpec,
} from '../dist/index.js';

/** Runs fn repeatedly for about `budgetMs` after a warm-up and returns microseconds per call. */
function measure(fn, budgetMs = 500) {
  for (let i = 0; i < 50; i++) fn();
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < budgetMs) {
    for (let i = 0; i < 10; i++) fn();
    calls += 10;
    elapsed = performance.now() - start;
  }
  return (elapsed * 1000) / calls;
}

const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(2)} µs`);

// A deterministic shuffle, so runs are comparable.
function shuffled(values, seed = 1) {
  const out = [...values];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

const result = resolvePoolSpec({ addresses: ['10.1.0.0/16'], prefix: 16, gateway: '10.1.0.1' });
if (!result.ok) throw new Error('bench pool is invalid');
const pool = result.pool;
const allocatable = [];
for (const range of pool.allocatable) for (let v = range.start; v <= range.end; v++) allocatable.push(v);

const scenarios = {
  'from the bottom (one used run)': allocatable.slice(0, 60_000),
  'scattered (random 60,000 of 65,533)': shuffled(allocatable).slice(0, 60_000),
};

console.log('ipam-core allocator benchmark (node %s)', process.version);
console.log('pool 10.1.0.0/16, gateway 10.1.0.1: %d allocatable addresses\n', allocatable.length);

for (const [name, used] of Object.entries(scenarios)) {
  const addresses = used.map((value) => ({ family: 4, value }));
  const build = measure(() => createAllocationState({ family: 4, allocatable: pool.allocatable, used: addresses }), 1000);
  const state = createAllocationState({ family: 4, allocatable: pool.allocatable, used: addresses });
  const next = measure(() => nextFree(state));
  const thousand = Array.from({ length: 1000 }, () => ({}));
  const batch = measure(() => allocate(state, thousand));
  const first = nextFree(state);
  console.log(`60,000 used, ${name}: ${state.used.length} used runs`);
  console.log(`  next free address:            ${fmt(next)} per op  (-> ${formatAddress({ family: 4, value: first })})`);
  console.log(`  allocate 1,000 at once:       ${fmt(batch)} per batch (${fmt(batch / 1000)} per address)`);
  console.log(`  build state from 60,000 used: ${fmt(build)} (once per status read)\n`);
}

// The status codec: 16,384 allocations with claim names shaped like the network controller's.
const hash = (n) => n.toString(36).padStart(5, '0').slice(-5);
const allocations = Array.from({ length: 16_384 }, (_, i) => ({
  address: formatAddress({ family: 4, value: 0x0a400000n + BigInt(i + 2) }),
  claim: { name: `prod-eu-md-0-${hash(i * 7919)}-${hash(i * 104729)}-bond0-1000` },
}));
const globalAllocations = allocations.map((a) => ({ ...a, claim: { namespace: 'default', ...a.claim } }));
const encoded = encodeAllocations(allocations);
const json = JSON.stringify({ allocations: encoded });
const globalJson = JSON.stringify({ allocations: encodeAllocations(globalAllocations) });
const encodeUs = measure(() => encodeAllocations(allocations), 1000);
const decodeUs = measure(() => decodeAllocations(encoded), 1000);
console.log('status codec, 16,384 allocations (36-character claim names):');
console.log(`  namespaced pool: ${Buffer.byteLength(json)} bytes (${(Buffer.byteLength(json) / 1048576).toFixed(3)} MiB)`);
console.log(
  `  global pool, "default/" on every entry: ${Buffer.byteLength(globalJson)} bytes (${(Buffer.byteLength(globalJson) / 1048576).toFixed(3)} MiB)`,
);
console.log(`  encode: ${fmt(encodeUs)}, decode: ${fmt(decodeUs)}`);
