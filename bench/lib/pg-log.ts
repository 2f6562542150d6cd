/**
 * The portal's embedded PostgreSQL seen from a benchmark: its connection URL, a control
 * connection, and PostgreSQL's own statement log around one piece of work (which statements
 * the portal sent, with their parameters and server-side durations). Used by
 * bench/records-bulk.ts and bench/records-portfolio.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { onCleanup } from './cleanup.ts';
import type { PortalProcess } from './portal.ts';

/** postgres://… of the portal's embedded PostgreSQL (its generated password is in the data dir). */
export function databaseUrlOf(portal: Pick<PortalProcess, 'dataDir' | 'pgPort'>): string {
  const { password } = JSON.parse(fs.readFileSync(path.join(portal.dataDir, 'postgres-credentials.json'), 'utf8')) as {
    password: string;
  };
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${portal.pgPort}/svc`;
}

/** One connection of the benchmark's own, closed at cleanup; stopping the portal under it is no error. */
export async function controlConnection(databaseUrl: string, name: string): Promise<pg.Client> {
  const db = new pg.Client({ connectionString: databaseUrl, application_name: name });
  db.on('error', () => undefined);
  await db.connect();
  onCleanup(`close the ${name} connection`, () => db.end().catch(() => undefined));
  return db;
}

export interface LoggedStatement {
  /** Server-side duration of this phase. */
  ms: number;
  /** parse, bind and execute of the extended protocol; `statement` for a simple query. */
  phase: 'parse' | 'bind' | 'execute' | 'statement';
  /** The backend that ran it. */
  pid: number;
  sql: string;
  /** The bound parameters as PostgreSQL logged them ($1 first; null for a NULL), when it did. */
  params: (string | null)[] | null;
}

/** `$1 = 'a', $2 = NULL, …` as PostgreSQL writes a statement's parameters in its log. */
export function parseLoggedParams(text: string): (string | null)[] {
  const out: (string | null)[] = [];
  for (const m of text.matchAll(/\$(\d+) = (NULL|'((?:[^']|'')*)')/g))
    out[Number(m[1]) - 1] = m[2] === 'NULL' ? null : (m[3] ?? '').replace(/''/g, "'");
  return out;
}

const ENTRY = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)? \S+ \[(\d+)\] (LOG|DETAIL):\s+([\s\S]*)$/;

/** The statements of a slice of PostgreSQL's log (the default `%m [%p] ` line prefix). */
export function parseStatementLog(text: string): LoggedStatement[] {
  const out: LoggedStatement[] = [];
  for (const entry of text.split(/\n(?=\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})/)) {
    const e = ENTRY.exec(entry.trimEnd());
    if (!e) continue;
    const pid = Number(e[1]);
    const body = e[3] ?? '';
    if (e[2] === 'DETAIL') {
      const p = /^parameters: ([\s\S]*)$/i.exec(body);
      const last = out.findLast((s) => s.pid === pid);
      if (p && last && last.params === null) last.params = parseLoggedParams(p[1] ?? '');
      continue;
    }
    const m = /^duration: ([\d.]+) ms\s+(?:(parse|bind|execute) [^:]*|statement): ([\s\S]*)$/.exec(body);
    if (!m) continue;
    out.push({
      ms: Number(m[1]),
      phase: (m[2] ?? 'statement') as LoggedStatement['phase'],
      pid,
      sql: (m[3] ?? '').trim(),
      params: null,
    });
  }
  return out;
}

/**
 * Runs `work` with `log_min_duration_statement = 0` and answers what PostgreSQL logged meanwhile,
 * without the statements of `control` (the benchmark's own connection). Null when the log file
 * cannot be read (e.g. another user's cluster).
 */
export async function withStatementLog<T>(
  control: pg.Client,
  portal: Pick<PortalProcess, 'dataDir'>,
  work: () => Promise<T>,
): Promise<{ result: T; statements: LoggedStatement[] } | null> {
  const logFile = path.join(portal.dataDir, 'postgres-log', 'postgresql.log');
  try {
    fs.accessSync(logFile, fs.constants.R_OK);
  } catch {
    return null;
  }
  const own = (await control.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
  await control.query('ALTER SYSTEM SET log_min_duration_statement = 0');
  await control.query('SELECT pg_reload_conf()');
  await sleep(300);
  try {
    const offset = fs.statSync(logFile).size;
    const result = await work();
    await sleep(300);
    const fd = fs.openSync(logFile, 'r');
    let text: string;
    try {
      const size = fs.fstatSync(fd).size;
      const buf = Buffer.alloc(Math.max(0, size - offset));
      fs.readSync(fd, buf, 0, buf.length, offset);
      text = buf.toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
    return { result, statements: parseStatementLog(text).filter((s) => s.pid !== own) };
  } finally {
    await control.query('ALTER SYSTEM RESET log_min_duration_statement');
    await control.query('SELECT pg_reload_conf()');
  }
}

/** A statement's text on one line, cut to `max` characters. */
export function oneLine(sqlText: string, max = 120): string {
  const s = sqlText.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
