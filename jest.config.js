// One jest project per stage of `npm test` (hack/test-stages.js runs them one after another; see
// hack/test/stages.js for what each holds, its workers, budget and timeout). Unit tests
// (packages/*/src/**/*.test.ts) need nothing; the core and system stages (packages/*/test, test/)
// share one real control plane: hack/test-stages.js starts it once for both, and the global setup
// starts one when jest runs on its own (a single file, `--selectProjects core`).
import { INTEGRATION_MATCH, SYSTEM_FILES, UNIT_MATCH, exactPathPattern, systemFilesOf } from './hack/test/stages.js';

const tsJest = ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.test.json' }];
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': tsJest },
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/test'],
  modulePathIgnorePatterns: ['<rootDir>/packages/[^/]+/dist/'],
  // Property tests share the run's seed (METAL_L2_FC_SEED): see the file.
  setupFilesAfterEnv: ['<rootDir>/hack/test/property-seed.js'],
  moduleNameMapper: {
    // The shared test helpers (workspace package test/support), by subpath: @metal-l2/test-support/wait-for.
    '^@metal-l2/test-support/([a-z-]+)$': '<rootDir>/test/support/$1.ts',
    '^@metal-l2/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
};
const integration = {
  ...common,
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  slowTestThreshold: 30,
};
const systemFiles = Object.keys(SYSTEM_FILES);
// One lane of the system stage when hack/test-stages.js runs its lanes side by side.
const systemLaneFiles = systemFilesOf(process.env['METAL_L2_TEST_LANE'] || undefined);

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: UNIT_MATCH },
    { ...integration, displayName: 'core', testMatch: INTEGRATION_MATCH, testPathIgnorePatterns: systemFiles.map(exactPathPattern) },
    { ...integration, displayName: 'system', testMatch: systemLaneFiles.map((f) => `<rootDir>/${f}`) },
  ],
  // Per-file durations for hack/test-stages.js (written only when it asks, through the environment).
  reporters: ['default', '<rootDir>/hack/test/times-reporter.js'],
  testTimeout: 120000,
};
