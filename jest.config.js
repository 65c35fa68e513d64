// One jest run covers every package. Unit tests (packages/*/src/**/*.test.ts) need nothing;
// integration and end-to-end suites (packages/*/test, test/) share one real control plane that
// the global setup starts once per run and the global teardown stops.
const tsJest = ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.test.json' }];
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': tsJest },
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/test'],
  modulePathIgnorePatterns: ['<rootDir>/packages/[^/]+/dist/'],
  moduleNameMapper: {
    // The shared test helpers (workspace package test/support), by subpath: @metal-l2/test-support/wait-for.
    '^@metal-l2/test-support/([a-z-]+)$': '<rootDir>/test/support/$1.ts',
    '^@metal-l2/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
};

export default {
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/packages/*/src/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/packages/*/test/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.js',
      globalTeardown: '<rootDir>/test/support/global-teardown.js',
      slowTestThreshold: 30,
    },
  ],
  testTimeout: 120000,
};
