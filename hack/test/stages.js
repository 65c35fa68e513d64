// The stages `npm test` runs (hack/test-stages.js), one jest project each (jest.config.js), in this
// order. A test file belongs to exactly one stage; hack/test-stages.js checks that before it runs
// anything, and that no core file starts what only the system stage may start.
//
// Budgets are the wall time a stage may take on this 2-core CI machine (figures in
// docs/test-times.md), generous enough not to flake under load: a stage over its budget fails the
// run with the figure, so a change that makes the suite slower is seen when it lands, not when CI
// crosses its limit. Set 2026-12-06 from clean-clone rehearsals (docs/test-times.md), about twice
// the figures: unit 9 to 21 s; core 493 s warm on three workers (603 s cold on two); system 643 s
// warm in two lanes (937 to 1,087 s one file at a time), each file up to 1.5 times slower beside
// the other lane. Before: unit 10 s at load average 1 and 154 s at 18; core 1,081 s at 7 to 11 and 2,135 s at
// 15 to 20, so a machine shared with other jobs can go over. A file running past its stage's
// fileTimeoutSeconds is taken for a hang and the stage is killed there, so a hang costs that file's
// limit (2, 10 or 20 minutes), not the CI run; the stage timeout is the last resort (jest itself
// not ending).

/**
 * @typedef {object} Stage
 * @property {'unit' | 'core' | 'system'} name
 * @property {string} what
 * @property {number} workers jest workers (1 = in band), in each lane
 * @property {readonly Lane[]} [lanes] jest runs side by side, each on its own files (SYSTEM_FILES); one run when absent
 * @property {number} budgetSeconds
 * @property {number} timeoutSeconds the whole stage's outer deadline
 * @property {number} fileTimeoutSeconds one file's: past it the file is taken for a hang and the stage is killed
 */

/** @type {readonly Stage[]} */
export const STAGES = [
  {
    name: 'unit',
    what: 'pure packages (packages/*/src), no control plane; a failure stops the run',
    workers: 2,
    budgetSeconds: 120,
    timeoutSeconds: 600,
    fileTimeoutSeconds: 120,
  },
  {
    name: 'core',
    what: 'packages/*/test and test/ on the shared control plane, controllers in process',
    // Three, not two: at two the machine was about 30% idle through the stage (its files mostly
    // wait on the API server and on controllers' timers); three filled it (622 s -> 419 s, the sum
    // of the files' times unchanged: 1,240 s -> 1,226 s).
    workers: 3,
    budgetSeconds: 1000,
    timeoutSeconds: 2400,
    fileTimeoutSeconds: 600,
  },
  {
    name: 'system',
    what: 'QEMU guests, the node, the demos, the real Cluster API + CAPP, the chart, the image: two lanes side by side, one file at a time in each',
    workers: 1,
    lanes: ['guests', 'nodes'],
    budgetSeconds: 1200,
    timeoutSeconds: 2400,
    fileTimeoutSeconds: 1200,
  },
];

/**
 * The system stage's lanes, run side by side, one file at a time in each. The guests lane has the
 * files that boot QEMU guests (under TCG they keep both cores busy through most of their boot),
 * the nodes lane those that start a node (containerd, a kubelet), so no two files boot guests, or
 * start a node, at once. The others mostly wait on the processes they start (the managers, helm,
 * the controllers) and are placed to even out the lanes: measured 2026-12-06, guests 340 s and
 * nodes 515 s with the image and the process demo in the nodes lane (the stage 515 s against 937 s
 * one file at a time), so those two run in the guests lane.
 * @typedef {'guests' | 'nodes'} Lane
 */

/**
 * The system stage's files (repository-relative), each with its lane and what it starts that the
 * core stage never does.
 * @type {Readonly<Record<string, { readonly lane: Lane; readonly starts: string }>>}
 */
export const SYSTEM_FILES = {
  'test/e2e/dataplane.test.ts': { lane: 'guests', starts: 'QEMU guests on the simulated switch' },
  'test/e2e/dataplane-endpoint.test.ts': { lane: 'guests', starts: 'QEMU guests on the simulated switch' },
  'test/demo/demo.test.ts': { lane: 'guests', starts: 'the process demo (hack/demo.js)' },
  'test/node/chart-on-node.test.ts': { lane: 'nodes', starts: 'a node (containerd, kubelet) and the image' },
  'test/demo/demo-in-cluster.test.ts': { lane: 'nodes', starts: 'the in-cluster demo: a node and the image' },
  'test/e2e/capi/capi.test.ts': { lane: 'nodes', starts: 'the real Cluster API v1.7.9 and CAPP v0.9.0 managers' },
  'test/image/image.test.ts': { lane: 'nodes', starts: 'the image, each controller from its root filesystem' },
  'test/chart/chart.test.ts': { lane: 'nodes', starts: 'the chart, both controllers as processes behind its webhooks' },
  // Starts nothing: it reads the chart's files with the image's, where the Node.js pin must agree.
  'test/install/runtime.test.ts': { lane: 'nodes', starts: 'the Node.js pin against the chart, the image notes and the README' },
};

/**
 * The system files jest runs: those of one lane when METAL_L2_TEST_LANE names it (hack/test-stages.js
 * sets it for each lane's jest), else all of them.
 * @param {string | undefined} lane
 * @returns {string[]}
 */
export function systemFilesOf(lane) {
  if (lane !== undefined && !Object.values(SYSTEM_FILES).some((f) => f.lane === lane)) {
    throw new Error(`METAL_L2_TEST_LANE=${lane}: no system file is in that lane (hack/test/stages.js)`);
  }
  return Object.entries(SYSTEM_FILES)
    .filter(([, f]) => lane === undefined || f.lane === lane)
    .map(([path]) => path);
}

/**
 * What only a system file may start: a core file whose source matches one of these belongs in
 * SYSTEM_FILES (the check names the file and the match).
 * @type {readonly { readonly pattern: RegExp; readonly starts: string }[]}
 */
export const SYSTEM_MARKERS = [
  { pattern: /\buseDataplaneWorld\b|\bstartQemu|\bqemu-system/, starts: 'QEMU guests' },
  { pattern: /\bstartNodeWorld\b|\bstartNodeCluster\b/, starts: 'a node' },
  { pattern: /\brunDemoScript\b|hack\/demo\.js|'demo\.js'/, starts: 'the demo' },
  { pattern: /\bstartUpstreamManager\b/, starts: 'the real Cluster API or CAPP managers' },
  { pattern: /\bbuildImage\b|build-image\.js/, starts: 'the image build' },
  { pattern: /'charts', 'metal-l2'|charts\/metal-l2/, starts: 'the chart' },
];

/** Jest's rootDir-relative globs for the unit and the integration (core + system) files. */
export const UNIT_MATCH = ['<rootDir>/packages/*/src/**/*.test.ts'];
export const INTEGRATION_MATCH = ['<rootDir>/packages/*/test/**/*.test.ts', '<rootDir>/test/**/*.test.ts'];

/** `path` as a jest path pattern (a regular expression) that matches that file only. */
export function exactPathPattern(path) {
  return `<rootDir>/${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
}
