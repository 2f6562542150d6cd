import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { HeavyFirstSequencer } from '@svc/test-support/heavy-first-sequencer';

// The workers boot faster on Node's compile cache, the same one the processes the tests start
// share (test-support/cli.ts); set here so that the forks inherit it.
process.env['NODE_COMPILE_CACHE'] ??= path.join(os.tmpdir(), 'svc-test-node-compile-cache');

export default defineConfig({
  test: {
    include: [
      'packages/*/tests/**/*.test.ts',
      'test-support/**/*.test.ts',
      'e2e/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'bench/**/*.test.ts',
      'scripts/**/*.test.ts',
    ],
    // The suite's PostgreSQL; the agent's bundle rebuilt when its sources changed since.
    globalSetup: ['test-support/postgres.ts', 'test-support/svcd-bundle.ts'],
    // The temp dirs the test kit made for a file go when the file ends.
    setupFiles: ['test-support/remove-temp-dirs.ts'],
    // Bounds for a test that hangs, not speed checks: a run beside four CPU-bound processes and a
    // few browser sessions (load 20 on 2 cores) took 10x the idle time, and six tests passed 60 s.
    testTimeout: 180_000,
    hookTimeout: 240_000,
    // expect.poll waits for a condition; vitest's 1 s default is shorter than a loaded machine
    // needs for a browser round trip. A condition that holds ends the wait at once.
    expect: { poll: { timeout: 20_000 } },
    pool: 'forks',
    // A worker runs file after file in one module graph instead of importing everything afresh
    // per file: the suite spent 190 s of its CPU importing (a third of a 10-minute run), now 20 s.
    // So a test file restores what it changes of the process: environment variables, spies,
    // fake timers, builtins (docs/testing.md "Shared workers").
    isolate: false,
    // Three on two cores: most files wait on processes, browsers and the network, so a third worker
    // fills the idle time (a clean-clone suite in 10 min instead of 14; docs/testing.md#times-of-the-whole-suite has the times).
    maxWorkers: 3,
    sequence: { sequencer: HeavyFirstSequencer },
    // The default reporter, then one plain closing line ("N passed, N failed") for CI.
    reporters: ['default', './scripts/summary-reporter.ts'],
    experimental: { fsModuleCache: true },
  },
});
