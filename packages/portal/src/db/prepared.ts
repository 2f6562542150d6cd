import { createHash } from 'node:crypto';
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';

/**
 * Run a compiled query as a NAMED prepared statement. node-postgres sends Kysely's queries
 * unnamed, so PostgreSQL parses and plans them on every execution; for the heartbeat that
 * planning cost more than the execution (bench/README.md). The name is derived from the SQL
 * text, so a changed statement can never reuse another's plan; pg prepares it once per
 * pooled connection.
 */
export async function queryPrepared<R>(pool: pg.Pool, label: string, query: CompiledQuery): Promise<R[]> {
  const name = `${label}_${createHash('sha1').update(query.sql).digest('hex').slice(0, 12)}`;
  const res = await pool.query({ name, text: query.sql, values: query.parameters as unknown[] });
  return res.rows as R[];
}
