/**
 * One place that knows what a benchmark has to undo: child processes, the embedded
 * PostgreSQL, temp dirs. Steps run newest first, once, whether the run ends normally,
 * throws, or is interrupted (SIGINT/SIGTERM/SIGHUP).
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

type Step = { name: string; run: () => Promise<void> | void; sync?: () => void };

const steps: Step[] = [];
let running: Promise<void> | null = null;
const abortController = new AbortController();

/** Aborted when the benchmark is interrupted; long waits and load runs listen to it. */
export const interrupted: AbortSignal = abortController.signal;

/**
 * Register an undo step. `sync` is a last-resort variant run from the process 'exit'
 * handler if the asynchronous cleanup never got to run (e.g. a second Ctrl-C).
 * Returns a function that unregisters the step (after it was done by hand).
 */
export function onCleanup(name: string, run: () => Promise<void> | void, sync?: () => void): () => void {
  const step: Step = sync ? { name, run, sync } : { name, run };
  steps.push(step);
  return () => {
    const i = steps.indexOf(step);
    if (i >= 0) steps.splice(i, 1);
  };
}

/** Run every registered step, newest first; failures are reported, not thrown. Idempotent. */
export function cleanupAll(): Promise<void> {
  running ??= (async () => {
    while (steps.length > 0) {
      const step = steps.pop() as Step;
      try {
        await step.run();
      } catch (err) {
        console.error(`cleanup: ${step.name} failed:`, err instanceof Error ? err.message : err);
      }
    }
  })();
  return running;
}

let installed = false;

/**
 * On the first SIGINT/SIGTERM/SIGHUP: abort `interrupted`, clean up and exit 130 (143/129).
 * On a second one: run the synchronous fallbacks and exit at once.
 */
export function installSignalHandlers(): void {
  if (installed) return;
  installed = true;
  let count = 0;
  const codes = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      count += 1;
      if (count > 1) {
        console.error(`\n${signal} again: forcing exit`);
        process.exit(codes[signal]);
      }
      console.error(`\n${signal}: stopping the benchmark and cleaning up (press again to force)`);
      abortController.abort(new Error(`interrupted by ${signal}`));
      const t = Date.now();
      void cleanupAll().finally(() => {
        console.error(`cleaned up in ${((Date.now() - t) / 1000).toFixed(1)} s`);
        process.exit(codes[signal]);
      });
    });
  }
  process.on('exit', () => {
    // Whatever the async cleanup did not reach: kill children, remove temp dirs.
    for (const step of [...steps].reverse()) {
      try {
        step.sync?.();
      } catch {
        // best effort
      }
    }
  });
}

/** Runs a benchmark's main: an error is one line on stderr and exit code 1; cleanup runs either way. */
export async function runBenchmark(main: () => Promise<void>): Promise<void> {
  await main()
    .catch((err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exitCode = 1;
    })
    .finally(() => cleanupAll());
}

/** A fresh directory under the system's temp dir, removed with everything in it at cleanup. */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  onCleanup(
    `remove ${dir}`,
    () => fs.promises.rm(dir, { recursive: true, force: true }),
    () => fs.rmSync(dir, { recursive: true, force: true }),
  );
  return dir;
}
