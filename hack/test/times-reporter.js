// A jest reporter that records each test file's duration and counts, and the files running now,
// into the JSON file named by METAL_L2_TEST_TIMES_FILE (hack/test-stages.js sets it, one file per
// stage); without it, nothing. The file is rewritten whenever a file starts or ends: a stage killed
// at its timeout still leaves the figures of what finished, and the runner sees a file that runs
// past its limit (a hang) while it runs.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * @typedef {object} FileTime
 * @property {string} path repository-relative
 * @property {number} seconds
 * @property {number} tests
 * @property {number} failed
 */
/**
 * @typedef {object} StageTimes
 * @property {FileTime[]} files finished files, in the order they finished
 * @property {Record<string, number>} running repository-relative path → when it started (ms since the epoch)
 */

export default class TimesReporter {
  /** @param {{ rootDir: string }} globalConfig */
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.out = process.env['METAL_L2_TEST_TIMES_FILE'];
    /** @type {StageTimes} */
    this.times = { files: [], running: {} };
  }

  /** @param {{ path: string }} test */
  onTestFileStart(test) {
    this.times.running[relative(this.rootDir, test.path)] = Date.now();
    this.write();
  }

  /**
   * @param {unknown} _test
   * @param {{ testFilePath: string; perfStats: { start: number; end: number }; numPassingTests: number; numFailingTests: number; numPendingTests: number; testExecError?: unknown }} result
   */
  onTestResult(_test, result) {
    const path = relative(this.rootDir, result.testFilePath);
    const { start, end } = result.perfStats;
    delete this.times.running[path];
    this.times.files.push({
      path,
      seconds: start > 0 && end >= start ? (end - start) / 1000 : 0,
      tests: result.numPassingTests + result.numFailingTests + result.numPendingTests,
      // A file that failed to run at all (a beforeAll that threw, a syntax error) counts as failed.
      failed: result.numFailingTests + (result.testExecError === undefined ? 0 : 1),
    });
    this.write();
  }

  write() {
    if (this.out !== undefined) writeFileSync(this.out, `${JSON.stringify(this.times, null, 1)}\n`);
  }

  getLastError() {
    return undefined;
  }
}
