import fs from 'node:fs';
import path from 'node:path';
import type { UploadFiles } from '../kit/portal/requests.ts';

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

/**
 * The files of a session directory as the scanner writes them (docs/api.md#sessions):
 * session_results.json, pipeline.log, report_*.html, exec_summary_*.html (the newest of each
 * kind when there are several); null when it holds no session_results.json.
 */
export function sessionDirFiles(dir: string): UploadFiles | null {
  const session = path.join(dir, 'session_results.json');
  if (!fs.existsSync(session)) return null;
  const log = path.join(dir, 'pipeline.log');
  return {
    session,
    log: fs.existsSync(log) ? log : undefined,
    report: displayFile(dir, 'report_') ?? undefined,
    exec: displayFile(dir, 'exec_summary_') ?? undefined,
  };
}
