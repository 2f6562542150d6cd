import { type Kysely, type RawBuilder, sql } from 'kysely';
import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Set-based writes of many rows: one array per column, sent as one text parameter and
 * expanded by unnest() in the statement, so PostgreSQL parses one statement per chunk
 * and no JSON. node-postgres can serialise JS arrays itself, but its serialiser runs two
 * regular expressions per element; on a 100,000-finding upload that was the portal's
 * largest single cost (bench/README.md, "Upload").
 */

/** A value as an element of a PostgreSQL array literal: always quoted, NULL bare. */
function element(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  const s = v instanceof Date ? v.toISOString() : typeof v === 'string' ? v : String(v);
  return /["\\]/.test(s) ? `"${s.replace(/["\\]/g, '\\$&')}"` : `"${s}"`;
}

/** The text of a one-dimensional PostgreSQL array of `values` ({"a",NULL,"b"}), to be cast to the column's type. */
export function pgArrayLiteral(values: readonly unknown[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) out += (i === 0 ? '' : ',') + element(values[i]);
  return `${out}}`;
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

/**
 * Runs the statements of `chunks` in order on `db` (one connection: a transaction), building
 * each while the previous one runs in PostgreSQL, so the portal's work on one chunk overlaps
 * the database's on the other. At most one statement is in flight: memory stays one chunk's.
 */
export async function pipelined<DB, T>(
  db: Kysely<DB>,
  chunks: Iterable<T>,
  build: (chunk: T) => RawBuilder<unknown>,
): Promise<void> {
  let inFlight: Promise<unknown> | null = null;
  for (const chunk of chunks) {
    const query = build(chunk);
    if (inFlight !== null) await inFlight;
    inFlight = query.execute(db);
    // A failure is reported by the await below (or the next turn's), never as unhandled.
    inFlight.catch(() => undefined);
    // Let the statement reach the socket before the next chunk is built.
    await nextTurn();
  }
  if (inFlight !== null) await inFlight;
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
