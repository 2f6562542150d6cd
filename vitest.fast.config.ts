import { defineConfig } from 'vitest/config';
import full from './vitest.config.ts';

/**
 * The fast tier (`npm run test:fast`): unit tests and the quicker in-process route tests, about
 * 30 s on this machine (docs/testing.md#times-of-the-whole-suite). It is chosen by file name:
 * every test file of the packages and of test-support/ is in it unless it ends in `.slow.test.ts`. A test file that starts Chromium,
 * spawns portal processes or starts its own PostgreSQL must be named so
 * (test-support/fast-tier.test.ts fails otherwise), and so should one that takes over ~5 s
 * (many cases against in-process portals, CLI processes, tmux, nginx, the test network).
 * e2e/ (client tools against a portal) and bench/ stay in the full suite only.
 */
const SLOW_TEST_FILES = '**/*.slow.test.ts';

// Spread, not mergeConfig: merging would append to the full suite's include list.
export default defineConfig({
  ...full,
  test: {
    ...full.test,
    include: [
      'packages/*/src/**/*.test.ts',
      'packages/*/tests/**/*.test.ts',
      'test-support/**/*.test.ts',
      'scripts/**/*.test.ts',
    ],
    exclude: ['**/node_modules/**', SLOW_TEST_FILES],
  },
});
