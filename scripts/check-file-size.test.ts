import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALLOW_FILE, checkFileSizes, countLines, MAX_LINES, sourceFiles } from './check-file-size.ts';

let root: string;
const write = (rel: string, lines: number) => {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), 'x;\n'.repeat(lines));
};

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-file-size-'));
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('file size check', () => {
  it('counts lines as an editor numbers them', () => {
    expect([countLines(''), countLines('a'), countLines('a\n'), countLines('a\nb'), countLines('a\n\n')]).toEqual([
      0, 1, 1, 2, 2,
    ]);
  });

  it('counts .ts and .tsx sources under the checked folders, helpers included, test files and build output not', () => {
    write('packages/a/src/x.ts', 1);
    write('packages/a/src/y.tsx', 1);
    write('packages/a/tests/helpers/h.ts', 1);
    write('packages/a/tests/x.test.ts', 1);
    write('packages/a/src/x.test.tsx', 1);
    write('packages/a/src/types.d.ts', 1);
    write('packages/a/dist/x.ts', 1);
    write('packages/a/node_modules/m/x.ts', 1);
    write('e2e/helpers/e.ts', 1);
    write('bench/b.ts', 1);
    write('scripts/s.ts', 1);
    write('test-support/t.ts', 1);
    write('other/o.ts', 1);
    write('packages/a/src/x.js', 1);
    expect(sourceFiles(root)).toEqual([
      'bench/b.ts',
      'e2e/helpers/e.ts',
      'packages/a/src/x.ts',
      'packages/a/src/y.tsx',
      'packages/a/tests/helpers/h.ts',
      'scripts/s.ts',
      'test-support/t.ts',
    ]);
  });

  it('passes at the limit and fails one line over it unless allow-listed', () => {
    write('packages/a/src/at.ts', MAX_LINES);
    write('packages/a/src/over.ts', MAX_LINES + 1);
    expect(checkFileSizes(root, {})).toEqual({
      over: [{ file: 'packages/a/src/over.ts', lines: MAX_LINES + 1 }],
      problems: [`packages/a/src/over.ts: ${MAX_LINES + 1} lines, over the limit of ${MAX_LINES}: split it`],
    });
    const allowed = checkFileSizes(root, { 'packages/a/src/over.ts': { lines: MAX_LINES + 1, reason: 'a table' } });
    expect(allowed.problems).toEqual([]);
    expect(allowed.over).toHaveLength(1);
  });

  it('fails an allow-listed file that grew past its ceiling, but not one that shrank', () => {
    write('packages/a/src/big.ts', 450);
    expect(checkFileSizes(root, { 'packages/a/src/big.ts': { lines: 449, reason: 'r' } }).problems).toEqual([
      'packages/a/src/big.ts: 450 lines, grew past its allowed 449: split it',
    ]);
    expect(checkFileSizes(root, { 'packages/a/src/big.ts': { lines: 460, reason: 'r' } }).problems).toEqual([]);
  });

  it('fails entries that must go: the file is gone or back under the limit, or the reason is missing', () => {
    write('packages/a/src/small.ts', 10);
    write('packages/a/src/big.ts', 401);
    const { problems } = checkFileSizes(root, {
      'packages/a/src/small.ts': { lines: 500, reason: 'r' },
      'packages/a/src/gone.ts': { lines: 500, reason: 'r' },
      'packages/a/src/big.ts': { lines: 401, reason: ' ' },
    });
    expect(problems).toEqual([
      'packages/a/src/small.ts: 10 lines, within the limit: remove its allow-list entry',
      'packages/a/src/gone.ts: allow-listed but no such source file: remove the entry',
      'packages/a/src/big.ts: its allow-list entry needs a one-line reason',
    ]);
  });

  it('passes on the repository with its allow-list, and exits 1 with the reasons when it does not', () => {
    const repo = path.resolve(import.meta.dirname, '..');
    const ok = spawnSync(process.execPath, ['scripts/check-file-size.ts'], { cwd: repo, encoding: 'utf8' });
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/^File sizes: \d+ source files over 400 lines, each allow-listed with a reason\.\n$/);
    const allow = JSON.parse(fs.readFileSync(ALLOW_FILE, 'utf8')) as Record<string, unknown>;
    expect(Object.keys(allow).length).toBeGreaterThan(0);
  });
});
