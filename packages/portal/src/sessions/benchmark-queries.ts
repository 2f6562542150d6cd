import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { SessionRef } from './queries.ts';

/** The benchmark's peer rows (benchmark.ts): one definition of the metrics for a session and its peers. */

/** A number at `path` of the metadata jsonb, NULL when absent or not a number. */
function metaNumber(table: string, path: string[]): RawBuilder<number | null> {
  const p = sql.lit(`{${path.join(',')}}`);
  const m = sql.ref(`${table}.metadata`);
  return sql<number | null>`(CASE WHEN jsonb_typeof(${m} #> ${p}) = 'number' THEN (${m} #>> ${p})::float8 END)`;
}

/** The three metric expressions over a row of `sessions` named `table` (one definition for the session and its peers). */
function metricColumns(table: string) {
  const findings = metaNumber(table, ['total_findings']);
  const hosts = metaNumber(table, ['total_hosts']);
  const sev = (s: string) => sql`coalesce(${metaNumber(table, ['severity_summary', s])}, 0)`;
  const critHigh = sql`(${sev('critical')} + ${sev('high')})`;
  const all = sql`(${sev('critical')} + ${sev('high')} + ${sev('medium')} + ${sev('low')} + ${sev('info')})`;
  return sql`
    ${sql.ref(`${table}.risk_score`)}::float8 AS risk_score,
    CASE WHEN ${hosts} > 0 THEN coalesce(${findings}, 0) / ${hosts} WHEN coalesce(${findings}, 0) = 0 THEN 0::float8 END AS findings_per_host,
    CASE WHEN ${all} > 0 THEN ${critHigh} / ${all} WHEN coalesce(${findings}, 0) = 0 THEN 0::float8 END AS critical_high_ratio`;
}

export interface MetricRow {
  client_id: string | null;
  risk_score: number | null;
  findings_per_host: number | null;
  critical_high_ratio: number | null;
}

/** One session's own metrics, read fresh; null when it does not exist. */
export async function sessionMetrics(db: Kysely<Database>, ref: SessionRef): Promise<MetricRow | null> {
  // NULLIF: sessions without a client (stored under '') count as no client (docs/api.md#ids-are-per-client).
  const { rows } =
    await sql<MetricRow>`SELECT NULLIF(s.client_id, '') AS client_id, ${metricColumns('s')} FROM sessions s WHERE s.client_id = ${ref.clientId} AND s.session_id = ${ref.sessionId}`.execute(
      db,
    );
  return rows[0] ?? null;
}

/** The latest session of every client/target pair (DISTINCT ON, newest first; ties broken by session id): the snapshot's rows. */
export async function latestPairMetrics(db: Kysely<Database>): Promise<MetricRow[]> {
  const { rows } = await sql<MetricRow>`
    SELECT NULLIF(latest.client_id, '') AS client_id, ${metricColumns('latest')}
    FROM (
      SELECT DISTINCT ON (s.client_id, s.target) s.client_id, s.risk_score, s.metadata
      FROM sessions s
      ORDER BY s.client_id, s.target, s.uploaded_at DESC, s.session_id DESC
    ) latest`.execute(db);
  return rows;
}
