// `npm test` after the build: the stages of hack/test/stages.js one after another, each its own
// jest run (its project, its workers) under an outer timeout, on one control plane shared by the
// core and system stages. At the end: each stage's total against its budget and the slowest files;
// after a full green run the figures go to docs/test-times.md, so a change in cost shows in review.
//
//   node hack/test-stages.js                 every stage (what npm test runs)
//   node hack/test-stages.js core system     those stages only (figures not recorded)
//   node hack/test-stages.js --check         only the check that every test file is in exactly one stage
//   node hack/test-stages.js core -- -t x    arguments after -- go to every stage's jest
//
// A unit failure stops the run (nothing else is worth starting); a core failure does not stop the
// system stage, so one CI run shows every failure. A stage over its budget fails the run once all
// stages are done. A stage with a file running past the stage's limit for one file, or past its own
// timeout, is killed (its process group: jest, its workers, what the tests started) and counts as
// failed; the summary names the file.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { clearInterval, clearTimeout, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { startOwnedControlPlane, stopControlPlane, sweepOrphanedControlPlanes } from '@metal-l2/local-control-plane';
import { awaitBackgroundBuilds } from './test/background-builds.js';
import { printSummary, renderRecord, seconds } from './test/report.js';
import { STAGES, SYSTEM_FILES, SYSTEM_MARKERS } from './test/stages.js';

const root = fileURLToPath(new URL('../', import.meta.url));
const jestBin = join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const timesDir = join(root, '.local', 'test-times');
const clustersDir = join(root, '.local', 'test-clusters');
const recordFile = join(root, 'docs', 'test-times.md');
/** How long a killed stage's jest gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 15_000;

/** @typedef {import('./test/stages.js').Stage} Stage */
/** @typedef {import('./test/times-reporter.js').FileTime} FileTime */
/** @typedef {import('./test/times-reporter.js').StageTimes} StageTimes */
/** @typedef {import('./test/report.js').StageResult} StageResult */

// The tests run on the project's pinned Node.js (hack/nodejs), whatever node started npm: a shell
// still on the machine's older node (the README's `npm test` after `npm run demo`) re-runs this
// script on the pinned one, which every controller and tool the tests start then inherits.
if (Number(process.versions.node.split('.')[0]) < 24) {
  const bin = execFileSync(process.execPath, [join(root, 'hack', 'install-node.js')], { encoding: 'utf8' }).trim();
  process.stderr.write(`npm test: node ${process.version} is older than the pinned Node.js 24; running on ${bin}/node\n`);
  const again = spawnSync(join(bin, 'node'), process.argv.slice(1), {
    stdio: 'inherit',
    env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` },
  });
  process.exit(again.status ?? 1);
}

const argv = process.argv.slice(2);
const dashes = argv.indexOf('--');
const ownArgs = dashes === -1 ? argv : argv.slice(0, dashes);
const jestArgs = dashes === -1 ? [] : argv.slice(dashes + 1);
const checkOnly = ownArgs.includes('--check');
const names = ownArgs.filter((a) => a !== '--check');
for (const n of names) {
  if (!STAGES.some((s) => s.name === n)) fail(`unknown stage "${n}": the stages are ${STAGES.map((s) => s.name).join(', ')}`);
}
const selected = names.length === 0 ? STAGES : STAGES.filter((s) => names.includes(s.name));
const fullRun = selected.length === STAGES.length && jestArgs.length === 0;

const membership = checkMembership();
if (checkOnly) {
  console.log(`every test file is in exactly one stage: ${STAGES.map((s) => `${s.name} ${membership.get(s.name)?.length}`).join(', ')}`);
  process.exit(0);
}

/** @type {StageResult[]} */
const results = [];
/** @type {{ stateDir: string } | undefined} */
let plane;
/** The jests running now (a stage's lanes run side by side). @type {Set<import('node:child_process').ChildProcess>} */
const running = new Set();
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) {
  process.once(signal, () => {
    for (const child of running) if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
    void (plane === undefined ? Promise.resolve() : stopControlPlane(plane.stateDir)).finally(() => process.exit(130));
  });
}

// One seed for every property test of the run (hack/test/property-seed.js), printed to repeat it.
process.env['METAL_L2_FC_SEED'] ||= String(Math.floor(Math.random() * 2 ** 31));
console.log(
  `property tests (fast-check) seed: ${process.env['METAL_L2_FC_SEED']} (repeat with METAL_L2_FC_SEED=${process.env['METAL_L2_FC_SEED']})`,
);

mkdirSync(timesDir, { recursive: true });
try {
  for (const stage of selected) {
    const files = membership.get(stage.name) ?? [];
    if (stage.name !== 'unit' && plane === undefined && files.length > 0) plane = await startSharedControlPlane();
    if (stage.name === 'system' && files.length > 0) {
      const builds = await awaitBackgroundBuilds(root, stage.timeoutSeconds * 1000);
      if (builds.message !== undefined) (builds.ok ? console.log : console.error)(`\n${builds.message}`);
      if (!builds.ok) {
        results.push(notRun(stage, files));
        continue;
      }
    }
    const result = await runStage(stage, files);
    results.push(result);
    if (stage.name === 'unit' && result.outcome !== 'passed') {
      for (const rest of selected.slice(selected.indexOf(stage) + 1)) results.push(notRun(rest, membership.get(rest.name) ?? []));
      break;
    }
  }
} finally {
  if (plane !== undefined && process.env['METAL_L2_KEEP_CONTROL_PLANE'] !== '1') await stopControlPlane(plane.stateDir);
}

// A stage killed at a timeout says so already; over budget is news only for one that finished.
const overBudget = results.filter((r) => (r.outcome === 'passed' || r.outcome === 'failed') && r.seconds > r.stage.budgetSeconds);
printSummary(results);
const green = results.every((r) => r.outcome === 'passed');
if (fullRun && green) {
  writeFileSync(recordFile, renderRecord(results));
  console.log(`figures written to ${relative(root, recordFile)} (commit them with the change that moved them)`);
}
for (const r of overBudget) {
  console.error(
    `\nstage ${r.stage.name} took ${r.seconds} s, over its budget of ${r.stage.budgetSeconds} s (hack/test/stages.js; ` +
      `load average ${loadavg()[0]?.toFixed(1)} on ${cpus().length} cores). ` +
      `Its slowest files are above; the last recorded figures are in docs/test-times.md. Make the new cost smaller, ` +
      'or, if it is worth it, raise the budget in the same change and say why.',
  );
}
process.exit(green && overBudget.length === 0 ? 0 : 1);

// ---------------------------------------------------------------------------------------------

/**
 * Every *.test.ts under packages/ and test/ in exactly one stage (as jest itself selects them), the
 * system list naming only files that exist, and no core file starting what only a system file may.
 * @returns {Map<string, string[]>} stage name → its files, repository-relative
 */
function checkMembership() {
  const onDisk = [...walkTests(join(root, 'packages')), ...walkTests(join(root, 'test'))].map((f) => relative(root, f)).sort();
  /** @type {Map<string, string[]>} */
  const byStage = new Map();
  /** @type {Map<string, string[]>} */
  const stagesOf = new Map(onDisk.map((f) => [f, []]));
  for (const stage of STAGES) {
    const listed = listTests(stage.name);
    byStage.set(stage.name, listed);
    for (const f of listed) stagesOf.set(f, [...(stagesOf.get(f) ?? []), stage.name]);
  }
  const problems = [];
  for (const [file, stages] of stagesOf) {
    if (stages.length === 0) problems.push(`${file} is in no stage (unit: packages/*/src; core and system: packages/*/test, test/)`);
    if (stages.length > 1) problems.push(`${file} is in ${stages.length} stages: ${stages.join(', ')}`);
  }
  for (const file of Object.keys(SYSTEM_FILES)) {
    if (!stagesOf.has(file)) problems.push(`${file} is listed in SYSTEM_FILES (hack/test/stages.js) but does not exist`);
  }
  for (const file of byStage.get('core') ?? []) {
    const source = readFileSync(join(root, file), 'utf8');
    for (const { pattern, starts } of SYSTEM_MARKERS) {
      const match = pattern.exec(source);
      if (match !== null) problems.push(`${file} starts ${starts} ("${match[0]}"): add it to SYSTEM_FILES in hack/test/stages.js`);
    }
  }
  if (problems.length > 0) fail(`test files and stages disagree:\n  ${problems.join('\n  ')}`);
  return byStage;
}

/** @param {string} dir @returns {string[]} */
function walkTests(dir) {
  /** @type {string[]} */
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...walkTests(path));
    else if (entry.name.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

/** The files jest runs for one project, repository-relative. @param {string} project @returns {string[]} */
function listTests(project) {
  const env = { ...process.env };
  delete env['METAL_L2_TEST_LANE']; // every lane's files
  const res = spawnSync(process.execPath, [jestBin, '--listTests', '--json', '--selectProjects', project], {
    cwd: root,
    env,
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  if (res.status !== 0) fail(`jest --listTests --selectProjects ${project} failed:\n${res.stderr}`);
  return /** @type {string[]} */ (JSON.parse(res.stdout)).map((f) => relative(root, f)).sort();
}

/** The control plane the core and system stages share (jest's global setup sees it and starts none). */
async function startSharedControlPlane() {
  await sweepOrphanedControlPlanes(clustersDir);
  const started = Date.now();
  const owned = await startOwnedControlPlane({ repoRoot: root, parentDir: clustersDir, label: 'run' });
  process.env['METAL_L2_TEST_KUBECONFIG'] = owned.state.kubeconfig;
  process.env['METAL_L2_TEST_STATE_DIR'] = owned.stateDir;
  process.env['METAL_L2_TEST_BIN_DIR'] = owned.binDir;
  console.log(
    `\ncontrol plane for the core and system stages: ${owned.state.server} (started in ${seconds(Date.now() - started)} s); logs in ${owned.state.logDir}`,
  );
  return owned;
}

/**
 * One stage: its jest, or its lanes' jests side by side (each on its lane's files), under the
 * stage's timeout and its limit for one file. A hang kills the whole stage.
 * @param {Stage} stage @param {string[]} files @returns {Promise<StageResult>}
 */
async function runStage(stage, files) {
  // A developer's filter (-- -t x, a path) runs as one jest: lanes are for the whole stage's cost.
  const lanes = stage.lanes !== undefined && jestArgs.length === 0 ? stage.lanes : [undefined];
  const how = stage.workers === 1 ? 'one at a time' : `${stage.workers} workers`;
  console.log(
    `\n== stage ${stage.name}: ${files.length} files, ${lanes.length > 1 ? `lanes ${lanes.join(' and ')} side by side, each ${how}` : how}, ` +
      `budget ${stage.budgetSeconds} s, timeout ${stage.timeoutSeconds} s: ${stage.what}`,
  );
  const started = Date.now();
  const runs = lanes.map((lane) => startJest(stage, lane));
  /** @type {string | undefined} */
  let killed;
  const kill = (/** @type {string} */ why) => {
    if (killed !== undefined) return;
    killed = why;
    console.error(`\nstage ${stage.name}: ${why}: killing its jest (a hang?)`);
    for (const { child } of runs) {
      if (child.pid !== undefined) killGroup(child.pid, 'SIGTERM');
      setTimeout(() => child.pid !== undefined && killGroup(child.pid, 'SIGKILL'), KILL_GRACE_MS).unref();
    }
  };
  const timer = setTimeout(() => kill(`over its timeout of ${stage.timeoutSeconds} s`), stage.timeoutSeconds * 1000);
  // A file running past its limit is a hang: the stage stops there rather than at its own timeout.
  const watchdog = setInterval(() => {
    const now = Date.now();
    for (const { timesFile } of runs) {
      for (const [path, since] of Object.entries(readTimes(timesFile).running)) {
        if (now - since > stage.fileTimeoutSeconds * 1000)
          kill(`${path} has run ${seconds(now - since)} s, over the ${stage.fileTimeoutSeconds} s a file may take`);
      }
    }
  }, 5_000);
  const codes = await Promise.all(runs.map(({ exited }) => exited));
  clearTimeout(timer);
  clearInterval(watchdog);
  // Control planes of test files killed with the stage (their owner is gone) are stopped now.
  if (killed !== undefined) await sweepOrphanedControlPlanes(clustersDir);
  const wall = seconds(Date.now() - started);
  const times = runs.flatMap(({ timesFile }) => readTimes(timesFile).files);
  const reported = new Set(times.map((t) => t.path));
  const failed = times.some((t) => t.failed > 0);
  return {
    stage,
    outcome: killed !== undefined ? 'timed out' : codes.every((c) => c === 0) && !failed ? 'passed' : 'failed',
    killed,
    seconds: wall,
    files: times,
    missing: jestArgs.length > 0 ? [] : files.filter((f) => !reported.has(f)),
  };
}

/**
 * One jest of a stage (of one lane when given), in its own process group, so a timeout kills jest's
 * workers and what the tests started with it.
 * @param {Stage} stage @param {string | undefined} lane
 */
function startJest(stage, lane) {
  const timesFile = join(timesDir, `${stage.name}${lane === undefined ? '' : `-${lane}`}.json`);
  rmSync(timesFile, { force: true });
  const args = [
    '--experimental-vm-modules',
    jestBin,
    '--selectProjects',
    stage.name,
    ...(stage.workers === 1 ? ['--runInBand'] : [`--maxWorkers=${stage.workers}`]),
    ...(jestArgs.length > 0 ? ['--passWithNoTests', ...jestArgs] : []),
  ];
  const env = { ...process.env, METAL_L2_TEST_TIMES_FILE: timesFile };
  delete env['METAL_L2_TEST_LANE'];
  if (lane !== undefined) env['METAL_L2_TEST_LANE'] = lane;
  const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', detached: true, env });
  running.add(child);
  /** @type {Promise<number | null>} */
  const exited = new Promise((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return { child, timesFile, exited };
}

/** @param {Stage} stage @param {string[]} files @returns {StageResult} */
function notRun(stage, files) {
  return { stage, outcome: 'not run', killed: undefined, seconds: 0, files: [], missing: files };
}

/** What the stage's reporter wrote so far (nothing yet: no file started). @param {string} file @returns {StageTimes} */
function readTimes(file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return { files: [], running: {} };
  }
}

/** @param {number} pid @param {NodeJS.Signals} signal */
function killGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** @param {string} message @returns {never} */
function fail(message) {
  console.error(`npm test: ${message}`);
  process.exit(1);
}
