import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './portal.ts';

/** Render rows as an aligned text table; the first row is the header. Numbers are right-aligned. */
export function table(rows: (string | number)[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, String(cell).length);
  }
  const line = (row: (string | number)[]): string =>
    row
      .map((cell, i) =>
        typeof cell === 'number' ? String(cell).padStart(widths[i] ?? 0) : String(cell).padEnd(widths[i] ?? 0),
      )
      .join('  ')
      .trimEnd();
  const [head, ...body] = rows;
  if (!head) return '';
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** bench/results (git-ignored). */
export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');

/** A file-name-safe UTC timestamp, e.g. 2026-11-22T02-23-53Z. */
export function stampOf(when: Date): string {
  return when
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
}

/** Write `data` to bench/results/<name>-<timestamp>.json and return the path. */
export function writeResult(name: string, data: unknown, when: Date = new Date()): string {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${name}-${stampOf(when)}.json`);
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}
