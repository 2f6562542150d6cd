import { defineConfig } from 'vitest/config';
import full from './vitest.config.ts';

/**
 * The fast tier (`npm run test:fast`): unit tests and in-process route tests. Every test file
 * of the packages is in it unless named below, so a new unit test is never left out; e2e/
 * (client tools against a portal) and bench/ stay in the full suite only.
 */
export const SLOW_FILES = [
  // Spawned portal processes, each with its own embedded PostgreSQL.
  'packages/portal/tests/command-exactly-once.test.ts',
  'packages/portal/tests/config.test.ts',
  'packages/portal/tests/database-outage.test.ts',
  'packages/portal/tests/embedded-restart.test.ts',
  'packages/portal/tests/identity-hardening.test.ts',
  'packages/portal/tests/lifecycle.test.ts',
  'packages/portal/tests/upload-crash.test.ts',
  // Embedded PostgreSQL servers started by the test itself.
  'packages/portal/tests/embedded-socket.test.ts',
  // Headless Chromium.
  'packages/portal/tests/browser-hostile-report.test.ts',
  'packages/portal/tests/browser-share.test.ts',
  // Terminals through tmux.
  'packages/client/tests/dependency-check.test.ts',
  'packages/client/tests/pi-validate.test.ts',
];

// Spread, not mergeConfig: merging would append to the full suite's include list.
export default defineConfig({
  ...full,
  test: {
    ...full.test,
    include: ['packages/*/src/**/*.test.ts', 'packages/*/tests/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...SLOW_FILES],
  },
});
