import { type Kysely, type RawBuilder, sql } from 'kysely';
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Set-based writes of many rows: one array per column, sent as one text parameter and
 * expanded by unnest() in the statement, so PostgreSQL parses one statement per chunk
 * and no JSON. node-postgres can serialise JS arrays itself, but its serialiser runs two
 * regular expressions per element; on a 100,000-finding upload that was the portal's
 * largest single cost (bench/README.md, "Upload").
 */

const QUOTED = /["\\]/g;
const quoted = (s: string): string =>
  s.includes('"') || s.includes('\\') ? `"${s.replace(QUOTED, '\\$&')}"` : `"${s}"`;

// An upload's rows share a handful of times (now, the scan's time): each is formatted once.
let lastTime = Number.NaN;
let lastTimeElement = '';
function timeElement(d: Date): string {
  const t = d.getTime();
  if (t !== lastTime) {
    lastTimeElement = `"${d.toISOString()}"`;
    lastTime = t;
  }
  return lastTimeElement;
}

/** A value as an element of a PostgreSQL array literal: text quoted, a finite number bare, NULL bare. */
function element(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') return quoted(v);
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (v instanceof Date) return timeElement(v);
  return quoted(String(v));
}

/** The text of a one-dimensional PostgreSQL array of `values` ({"a",NULL,"b"}), to be cast to the column's type. */
export function pgArrayLiteral(values: readonly unknown[]): string {
  const n = values.length;
  if (n === 0) return '{}';
  // Joined once into a flat string: node-postgres measures and copies it whole, and a string
  // grown by += is a rope that V8 first has to flatten (bench/README.md, "Upload").
  const parts = new Array<string>(n);
  for (let i = 0; i < n; i++) parts[i] = element(values[i]);
  parts[0] = `{${parts[0]}`;
  parts[n - 1] = `${parts[n - 1]}}`;
  return parts.join(',');
}

/**
 * A row's list of text as one element of a text array parameter: its own array literal, which
 * the statement casts with `x.col::text[]`. PostgreSQL has no ragged arrays, and this is cheaper
 * for it than JSON text unnested per row (ARRAY(SELECT jsonb_array_elements_text(…))).
 */
export const textListCell = (list: readonly (string | null)[] | null | undefined): string | null =>
  list == null ? null : pgArrayLiteral(list);

/** `$n::type[]` for a column's values. */
export function arrayParam(values: readonly unknown[], type: string): RawBuilder<unknown> {
  return sql`${pgArrayLiteral(values)}::${sql.raw(type)}[]`;
}

/** Statements handed over (running, or waiting for the connection) while the next one is built. */
const AHEAD = 2;

/**
 * Runs `statements` in order on `db` (one connection: a transaction). Each is built as the
 * iterable yields it, while up to two before it run in PostgreSQL or wait for the connection,
 * so the portal's work on the next chunk overlaps the database's on the last ones, also across
 * the tables of one upload (records, history, index). Memory stays a few chunks'.
 */
export async function pipelined<DB>(db: Kysely<DB>, statements: Iterable<RawBuilder<unknown>>): Promise<void> {
  const queued: Promise<unknown>[] = [];
  try {
    for (const statement of statements) {
      if (queued.length === AHEAD) await queued.shift();
      const running = statement.execute(db);
      // A failure is reported by its own await, in order, never as unhandled.
      running.catch(() => undefined);
      queued.push(running);
      // Let the statement reach the connection before the next one is built.
      await nextTurn();
    }
    while (queued.length > 0) await queued.shift();
  } catch (err) {
    // Kysely runs a transaction's statements one at a time, and its rollback does not wait in
    // that line: a statement still waiting would run after the rollback, outside the
    // transaction, and stay. So the failure is reported once every statement handed over is done.
    await Promise.allSettled(queued);
    throw err;
  }
}

/** `rows` in slices of `size`; an iterable is drawn a slice at a time. */
export function* chunksOf<T>(rows: Iterable<T>, size: number): Generator<T[]> {
  let chunk: T[] = [];
  for (const row of rows) {
    chunk.push(row);
    if (chunk.length === size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}
