// Jest setup (every project): the property tests (fast-check) of a run share one seed, printed by
// hack/test-stages.js and repeatable with METAL_L2_FC_SEED=<seed> npm test (or the same variable
// before a single jest run). Without it each test file draws its own seed. fast-check's failure
// message names the seed (and the path to the failing case) either way. Only files that import
// fast-check load it.
import { readFileSync } from 'node:fs';
import { expect } from '@jest/globals';

const testPath = expect.getState().testPath;
if (testPath !== undefined && readFileSync(testPath, 'utf8').includes("from 'fast-check'")) {
  const fc = await import('fast-check');
  const fromEnv = process.env['METAL_L2_FC_SEED'];
  const seed = fromEnv === undefined || fromEnv === '' ? Math.floor(Math.random() * 2 ** 31) : Number(fromEnv);
  if (!Number.isInteger(seed)) throw new Error(`METAL_L2_FC_SEED must be an integer, not "${fromEnv}"`);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed });
}
