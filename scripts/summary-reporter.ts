import type { Reporter, TestModule } from 'vitest/node';

/** Prints "N passed, N failed, N skipped" alone on the last line, for CI logs. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let failedHere = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skipped++;
      }
      // A file that failed with no failed test (a hook, an import) counts as one failure.
      failed += mod.state() === 'failed' && failedHere === 0 ? 1 : failedHere;
    }
    failed += errors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
