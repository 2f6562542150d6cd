import fs from 'node:fs';
import path from 'node:path';

/**
 * The display file of one kind in a session directory (`report_*.html` or
 * `exec_summary_*.html`): the newest when a directory holds several (a client renamed between
 * runs leaves the old name behind), ties broken by name. `svc upload` sends this one and the
 * benchmark step renders this one again, so both always mean the same file.
 */
export function displayFile(dir: string, prefix: 'report_' | 'exec_summary_'): string | null {
  const found = fs
    .readdirSync(dir)
    .filter((n) => n.startsWith(prefix) && n.endsWith('.html'))
    .map((n) => ({ file: path.join(dir, n), mtime: fs.statSync(path.join(dir, n)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime || a.file.localeCompare(b.file));
  return found[0]?.file ?? null;
}
