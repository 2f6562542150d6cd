import { globSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import suite from '../vitest.config.ts';

/**
 * A test's or hook's own time bound is there for one that hangs, never as a speed check: the
 * suite's bounds are set for a loaded machine (vitest.config.ts), and a file that sets a shorter
 * one fails on a busy CI runner while it passes here. So no file sets a shorter one.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const TEST_BOUND = suite.test?.testTimeout ?? 0;
const HOOK_BOUND = suite.test?.hookTimeout ?? 0;

const HOOK = /^(beforeAll|beforeEach|afterAll|afterEach)\(/;
const TEST = /^(it|test)(\.\w+)*\(/;

/** `line: bound` for each test or hook in `source` bounded below the suite's bound for its kind. */
export function shortBounds(source: string): string[] {
  const lines = source.split('\n');
  const out: string[] = [];
  lines.forEach((line, i) => {
    const option = /^\s*(it|test)(\.\w+)*\(.*\{ timeout: ([0-9_]+) \}, (async )?\(/.exec(line);
    if (option && Number(option[3]!.replaceAll('_', '')) < TEST_BOUND) out.push(`${i + 1}: ${option[3]}`);
    const close = /^(\s*)\}, ([0-9_]+)\);$/.exec(line);
    if (!close) return;
    const indent = close[1]!.length;
    const opener = lines
      .slice(0, i)
      .reverse()
      .find((l) => new RegExp(`^ {${indent}}[a-zA-Z]`).test(l))
      ?.trim();
    const bound = Number(close[2]!.replaceAll('_', ''));
    const limit = opener && HOOK.test(opener) ? HOOK_BOUND : opener && TEST.test(opener) ? TEST_BOUND : 0;
    if (bound < limit) out.push(`${i + 1}: ${close[2]}`);
  });
  return out;
}

describe('time bounds of tests and hooks', () => {
  it('finds a test or a hook bounded below the suite, in either form, and leaves the rest', () => {
    const planted = [
      "it('a', async () => {",
      '}, 60_000);',
      'beforeAll(async () => {',
      '}, 200_000);',
      "it('b', { timeout: 90_000 }, async () => {",
      '});',
      "it('c', async () => {",
      `}, ${TEST_BOUND + 1});`,
      '  await until(async () => {',
      '  }, 5_000);',
    ].join('\n');
    expect(shortBounds(planted)).toEqual(['2: 60_000', '4: 200_000', '5: 90_000']);
  });

  it('no test file sets a bound below the suite’s', () => {
    // The suite's own list of test files, so a new home of tests is checked without anyone listing it.
    const files = globSync(suite.test?.include ?? [], { cwd: ROOT, exclude: ['**/node_modules/**'] });
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => shortBounds(readFileSync(path.join(ROOT, f), 'utf8')).map((b) => `${f}:${b}`));
    expect(found).toEqual([]);
  });
});
