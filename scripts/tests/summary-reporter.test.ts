import type { TestModule } from 'vitest/node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import SummaryReporter from '../summary-reporter.ts';

/** A test module as the reporter reads it: its state and its tests' states. */
const moduleOf = (state: string, tests: string[]) =>
  ({
    state: () => state,
    children: { allTests: () => tests.map((s) => ({ result: () => ({ state: s }) })) },
  }) as unknown as TestModule;

function lastLine(modules: TestModule[], errors: unknown[] = []): string {
  const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    new SummaryReporter().onTestRunEnd(modules, errors);
    return String(write.mock.calls.at(-1)?.[0]).trim();
  } finally {
    write.mockRestore();
  }
}

describe('the summary line', () => {
  afterEach(() => vi.restoreAllMocks());

  it('counts the tests of each file', () => {
    expect(lastLine([moduleOf('failed', ['passed', 'failed', 'skipped']), moduleOf('passed', ['passed'])])).toBe(
      '2 passed, 1 failed, 1 skipped',
    );
  });

  it('counts a file whose hook failed, its tests skipped, as a failure', () => {
    expect(lastLine([moduleOf('failed', ['skipped', 'skipped']), moduleOf('passed', ['passed'])])).toBe(
      '1 passed, 1 failed, 2 skipped',
    );
  });

  it('counts a file that failed before it had tests, and errors outside any file', () => {
    expect(lastLine([moduleOf('failed', [])], [new Error('unhandled')])).toBe('0 passed, 2 failed, 0 skipped');
  });
});
