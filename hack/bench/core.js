// (a) The allocation core: runs the ipam-core micro-benchmark (packages/ipam-core/bench) over its
// built dist and turns its report into a table. The target is next free address in a /16 with
// 60,000 used under 50 µs.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './cluster.js';
import { num, printTable, section } from './table.js';

const run = promisify(execFile);

const toMicroseconds = (value, unit) => (unit === 'ms' ? Number(value) * 1000 : Number(value));

export async function runCore() {
  const script = join('packages', 'ipam-core', 'bench', 'allocator.bench.js');
  const command = `node ${script}`;
  section(`allocation core: ${command}`);
  const { stdout } = await run(process.execPath, [join(repoRoot, script)], { cwd: repoRoot, maxBuffer: 4 * 1024 * 1024 });
  const scenarios = [];
  let current;
  for (const line of stdout.split('\n')) {
    const head = /^60,000 used, (.+): (\d+) used runs/.exec(line);
    if (head) {
      current = { name: head[1], runs: Number(head[2]) };
      scenarios.push(current);
      continue;
    }
    const figure = /^\s+(next free address|allocate 1,000 at once|build state from 60,000 used):\s+([\d.]+) (µs|ms)/.exec(line);
    if (figure?.[1] !== undefined && current) current[figure[1]] = toMicroseconds(figure[2], figure[3]);
  }
  if (scenarios.length === 0 || scenarios.some((s) => s['next free address'] === undefined)) {
    console.log(stdout);
    throw new Error(`could not read the figures of ${command} (its output is above)`);
  }
  printTable(
    ['pool 10.1.0.0/16, 60,000 used', 'used runs', 'next free', 'allocate 1,000', 'build state'],
    scenarios.map((s) => [
      s.name,
      num(s.runs),
      `${num(s['next free address'], 2)} µs`,
      `${num(s['allocate 1,000 at once'], 0)} µs`,
      `${num(s['build state from 60,000 used'], 0)} µs`,
    ]),
  );
  const codec = stdout.split('\n').filter((l) => /status codec|namespaced pool:|global pool|encode:/.test(l));
  if (codec.length > 0) console.log(`\n${codec.join('\n')}`);
  const worst = Math.max(...scenarios.map((s) => s['next free address']));
  const buildUs = Math.max(...scenarios.map((s) => s['build state from 60,000 used']));
  return { command, nextFreeUs: worst, buildUs, scenarios };
}
