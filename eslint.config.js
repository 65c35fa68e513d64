import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Dependencies point one way: controllers -> kube, metal-api, ipam-core -> backoff. The pure packages
// never reach up, and nothing imports a controller.
const layering = {
  backoff: ['@metal-l2/*'],
  'ipam-core': ['@metal-l2/*'],
  // The Metal client may use the shared backoff rule, nothing else of ours.
  'metal-api': ['@metal-l2/*', '!@metal-l2/backoff'],
  // Pure like ipam-core, and no I/O either: the files it renders are data for the boot script.
  'machine-config': ['@metal-l2/*', 'node:fs', 'node:fs/*', 'node:child_process', 'node:http', 'node:https', 'node:dns'],
  'metal-sim': ['@metal-l2/ipam-core', '@metal-l2/kube', '@metal-l2/ipam-controller', '@metal-l2/network-controller'],
  kube: ['@metal-l2/*', '!@metal-l2/backoff'],
  'ipam-controller': ['@metal-l2/network-controller', '@metal-l2/metal-sim', '@metal-l2/local-control-plane', '@metal-l2/capp-fixture'],
  'network-controller': ['@metal-l2/ipam-controller', '@metal-l2/metal-sim', '@metal-l2/local-control-plane', '@metal-l2/capp-fixture'],
  // A dev-only fixture: it plays CAPP against the Metal API; it never reaches into our controllers.
  'capp-fixture': ['@metal-l2/ipam-controller', '@metal-l2/network-controller', '@metal-l2/metal-sim', '@metal-l2/local-control-plane'],
};

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.local/**', 'coverage/**', 'charts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'max-params': ['error', 3],
    },
  },
  ...Object.entries(layering).map(([pkg, banned]) => ({
    files: [`packages/${pkg}/src/**/*.ts`],
    ignores: ['**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: banned.filter((b) => b !== `@metal-l2/${pkg}`),
              message: `${pkg} must not import this package (dependencies point down)`,
            },
          ],
        },
      ],
    },
  })),
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'packages/*/test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      'max-params': 'off',
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', fetch: 'readonly' },
    },
  },
);
