import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/tests/**/*.test.ts', 'e2e/**/*.test.ts', 'packages/*/src/**/*.test.ts', 'bench/**/*.test.ts'],
    globalSetup: ['packages/portal/tests/helpers/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    // The default reporter, then one plain closing line ("N passed, N failed") for CI.
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});
