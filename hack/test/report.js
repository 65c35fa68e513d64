// What hack/test-stages.js prints at the end of a run and writes to docs/test-times.md.
import { cpus, loadavg } from 'node:os';

/** @typedef {import('./stages.js').Stage} Stage */
/** @typedef {import('./times-reporter.js').FileTime} FileTime */
/**
 * @typedef {object} StageResult
 * @property {Stage} stage
 * @property {'passed' | 'failed' | 'timed out' | 'not run'} outcome
 * @property {string | undefined} killed why the stage was killed (a timeout), if it was
 * @property {number} seconds wall time, jest's start to its exit
 * @property {FileTime[]} files
 * @property {string[]} missing files of the stage that reported no result
 */

/** How many of the slowest files the summary lists. */
const SLOWEST = 15;

/** The stage totals against their budgets, the slowest files, what did not run. @param {StageResult[]} all */
export function printSummary(all) {
  const rows = all.map((r) => [
    r.stage.name,
    r.outcome,
    String(r.files.length),
    String(r.files.reduce((n, f) => n + f.tests, 0)),
    String(r.files.reduce((n, f) => n + f.failed, 0)),
    `${r.seconds}`,
    `${r.stage.budgetSeconds}`,
    `${seconds(r.files.reduce((n, f) => n + f.seconds * 1000, 0))}`,
  ]);
  console.log('\n== test stages');
  console.log(table(['stage', 'outcome', 'files', 'tests', 'failed', 'wall s', 'budget s', 'sum of files s'], rows));
  const total = all.reduce((n, r) => n + r.seconds, 0);
  console.log(`total ${total} s on ${cpus().length} cores (load average ${loadavg()[0]?.toFixed(1)} at the end)`);
  console.log(`property tests (fast-check) seed: ${process.env['METAL_L2_FC_SEED']}`);
  const slowest = all
    .flatMap((r) => r.files.map((f) => ({ ...f, stage: r.stage.name })))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, SLOWEST);
  console.log(`\n== the ${slowest.length} slowest files`);
  console.log(
    table(
      ['s', 'stage', 'file'],
      slowest.map((f) => [f.seconds.toFixed(0), f.stage, f.path]),
    ),
  );
  for (const r of all) {
    if (r.killed !== undefined) console.log(`\nstage ${r.stage.name} was killed: ${r.killed}`);
    if (r.missing.length > 0) console.log(`\nstage ${r.stage.name}: no result from ${r.missing.length} files: ${r.missing.join(', ')}`);
  }
}

/** docs/test-times.md: the stage totals and every file's duration, in a stable order for review. @param {StageResult[]} all */
export function renderRecord(all) {
  const lines = [
    '# Test times',
    '',
    'Written by `npm test` (hack/test-stages.js) after a full green run; commit it with the change that',
    'moved the figures. Budgets and timeouts live in hack/test/stages.js. Seconds are wall time on the',
    'machine named below; with three workers (core) or two lanes (system) the files overlap, so their sum exceeds the stage.',
    '',
    `Last run: ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, load average ${loadavg()[0]?.toFixed(1)} at the end.`,
    '',
    table(
      ['stage', 'files', 'tests', 'wall s', 'budget s'],
      all.map((r) => [
        r.stage.name,
        `${r.files.length}`,
        `${r.files.reduce((n, f) => n + f.tests, 0)}`,
        `${r.seconds}`,
        `${r.stage.budgetSeconds}`,
      ]),
      true,
    ),
    '',
  ];
  for (const r of all) {
    lines.push(`## ${r.stage.name}`, '');
    lines.push(
      table(
        ['file', 'tests', 's'],
        [...r.files].sort((a, b) => a.path.localeCompare(b.path)).map((f) => [f.path, `${f.tests}`, f.seconds.toFixed(0)]),
        true,
      ),
      '',
    );
  }
  return `${lines.join('\n')}`;
}

/** A plain-text or markdown table. @param {string[]} head @param {string[][]} rows @param {boolean} [markdown] */
function table(head, rows, markdown = false) {
  if (markdown) return [head, head.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ')).join('\n');
}

/** Whole seconds. @param {number} ms */
export function seconds(ms) {
  return Math.round(ms / 1000);
}
