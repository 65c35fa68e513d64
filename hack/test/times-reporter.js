// A jest reporter that records each test file's duration and counts into the JSON file named by
// METAL_L2_TEST_TIMES_FILE (hack/test-stages.js sets it, one file per stage); without it, nothing.
// The file is rewritten after every test file, so a stage killed at its timeout still leaves the
// figures of what finished.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * @typedef {object} FileTime
 * @property {string} path repository-relative
 * @property {number} seconds
 * @property {number} tests
 * @property {number} failed
 */

export default class TimesReporter {
  /** @param {{ rootDir: string }} globalConfig */
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.out = process.env['METAL_L2_TEST_TIMES_FILE'];
    /** @type {FileTime[]} */
    this.files = [];
  }

  /**
   * @param {unknown} _test
   * @param {{ testFilePath: string; perfStats: { start: number; end: number }; numPassingTests: number; numFailingTests: number; numPendingTests: number; testExecError?: unknown }} result
   */
  onTestResult(_test, result) {
    if (this.out === undefined) return;
    const { start, end } = result.perfStats;
    this.files.push({
      path: relative(this.rootDir, result.testFilePath),
      seconds: start > 0 && end >= start ? (end - start) / 1000 : 0,
      tests: result.numPassingTests + result.numFailingTests + result.numPendingTests,
      // A file that failed to run at all (a beforeAll that threw, a syntax error) counts as failed.
      failed: result.numFailingTests + (result.testExecError === undefined ? 0 : 1),
    });
    writeFileSync(this.out, `${JSON.stringify(this.files, null, 1)}\n`);
  }

  getLastError() {
    return undefined;
  }
}
