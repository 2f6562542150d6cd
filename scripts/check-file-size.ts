/**
 * Flags source files over 400 lines (part of `npm run lint`). Every .ts/.tsx file under the
 * folders below counts, test helpers included; test files themselves (`*.test.ts`, `*.test.tsx`)
 * do not: each case there stands on its own, and a long file of them is not hard to follow.
 *
 * A file over the limit fails the check unless scripts/file-size-allow.json names it with a
 * one-line reason and a ceiling (its length when it was listed). The list only shrinks: a listed
 * file may not grow past its ceiling, and an entry whose file is gone or back under the limit
 * fails the check until it is removed.
 */
import fs from 'node:fs';
import path from 'node:path';

export const MAX_LINES = 400;
export const ROOTS = ['packages', 'e2e', 'bench', 'scripts', 'test-support'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'test-output']);

export interface AllowEntry {
  /** The file's length when it was listed; it may shrink, never grow past this. */
  lines: number;
  reason: string;
}
export type AllowList = Record<string, AllowEntry>;

const isSource = (name: string) => /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts');

/** The counted files under `root`, as sorted POSIX paths relative to it. */
export function sourceFiles(root: string, roots: readonly string[] = ROOTS): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith('.')) walk(child);
      } else if (entry.isFile() && isSource(entry.name)) {
        out.push(child);
      }
    }
  };
  for (const r of roots) if (fs.existsSync(path.join(root, r))) walk(r);
  return out.sort();
}

/** Lines as an editor numbers them: a final newline does not open another line. */
export function countLines(text: string): number {
  if (text === '') return 0;
  const breaks = text.split('\n').length - 1;
  return text.endsWith('\n') ? breaks : breaks + 1;
}

export interface SizeReport {
  /** Every counted file over the limit, with its length. */
  over: { file: string; lines: number }[];
  /** What fails the check, one line each. */
  problems: string[];
}

export function checkFileSizes(root: string, allow: AllowList, max = MAX_LINES): SizeReport {
  const over: SizeReport['over'] = [];
  const problems: string[] = [];
  const lengths = new Map<string, number>();
  for (const file of sourceFiles(root)) {
    const lines = countLines(fs.readFileSync(path.join(root, file), 'utf8'));
    lengths.set(file, lines);
    if (lines <= max) continue;
    over.push({ file, lines });
    const entry = allow[file];
    if (entry === undefined) {
      problems.push(`${file}: ${lines} lines, over the limit of ${max}: split it`);
    } else if (lines > entry.lines) {
      problems.push(`${file}: ${lines} lines, grew past its allowed ${entry.lines}: split it`);
    }
  }
  for (const [file, entry] of Object.entries(allow)) {
    const lines = lengths.get(file);
    if (typeof entry.reason !== 'string' || entry.reason.trim() === '' || entry.reason.includes('\n')) {
      problems.push(`${file}: its allow-list entry needs a one-line reason`);
    }
    if (lines === undefined) problems.push(`${file}: allow-listed but no such source file: remove the entry`);
    else if (lines <= max) problems.push(`${file}: ${lines} lines, within the limit: remove its allow-list entry`);
  }
  return { over, problems };
}

export const ALLOW_FILE = path.join(import.meta.dirname, 'file-size-allow.json');

if (process.argv[1] === import.meta.filename) {
  const root = path.resolve(import.meta.dirname, '..');
  const allow = JSON.parse(fs.readFileSync(ALLOW_FILE, 'utf8')) as AllowList;
  const { over, problems } = checkFileSizes(root, allow);
  if (problems.length > 0) {
    for (const p of problems) console.error(p);
    console.error(`\nFile sizes: ${problems.length} problem(s); the allow-list is ${path.relative(root, ALLOW_FILE)}`);
    process.exit(1);
  }
  console.log(`File sizes: ${over.length} source files over ${MAX_LINES} lines, each allow-listed with a reason.`);
}
