import { sql, type Kysely, type RawBuilder } from 'kysely';
import { BENCHMARK_METRICS, type BenchmarkLabel, type BenchmarkMetric, type BenchmarkMetricName } from '@svc/protocol';
import type { Database } from '../db/schema.ts';
import type { SessionRef } from './access.ts';

/**
 * Benchmark of one session against its peers (DESIGN D9).
 *
 * Peers: the latest session (by uploaded_at) of every client/target pair other than the
 * session's own pair. A client's other targets are peers too; older sessions of a pair
 * are not. All three metrics are "lower is better":
 * - risk_score: the session's risk score;
 * - findings_per_host: total_findings / total_hosts (none when no host was counted);
 * - critical_high_ratio: (critical + high) / all findings by severity; 0 when the
 *   session has no findings at all, none when findings exist but none has a severity.
 *
 * percentile = share of the peers that have the metric and do worse (a higher value),
 * ties counted half, as an integer 0-100: higher is better, 50 is the middle. Labels:
 * `Top 10%` (>= 90), `Above average` (>= 60), `Average` (41-59), `Below average`
 * (11-40), `Bottom 10%` (<= 10). Without a comparison the percentile is 50 (SPEC wants a
 * number) and the label says why: `No data` (the session lacks the metric), `No peers`
 * (no peer has it) or `Not enough peers` (fewer than MIN_PEERS have it).
 *
 * Privacy: the database answers counts only (how many peers are worse, equal, present),
 * never a peer's row, and a percentile needs peers from at least MIN_PEERS other clients
 * so it cannot describe a single other tenant's sessions.
 */
export const MIN_PEERS = 3;

export interface PeerCounts {
  /** Peers that have the metric. */
  n: number;
  /** Peers with a higher (worse) value. */
  worse: number;
  /** Peers with the same value. */
  equal: number;
  /**
   * Distinct clients other than the caller's among the peers that have the metric.
   * The privacy minimum counts these: the caller's own other targets are peers but
   * cannot make up the numbers, or a caller with one other tenant could infer its value.
   * Defaults to `n` for callers that count clients elsewhere.
   */
  otherClients?: number;
}

/** Mid-rank percentile: share of peers doing worse, ties counted half, rounded to an integer. */
export function percentileOf({ n, worse, equal }: PeerCounts): number {
  if (n <= 0) return 50;
  if (worse < 0 || equal < 0 || worse + equal > n) throw new RangeError('peer counts out of range');
  return Math.round((100 * (worse + equal / 2)) / n);
}

export function labelOf(percentile: number): Exclude<BenchmarkLabel, 'No peers' | 'Not enough peers' | 'No data'> {
  if (percentile >= 90) return 'Top 10%';
  if (percentile >= 60) return 'Above average';
  if (percentile > 40) return 'Average';
  if (percentile > 10) return 'Below average';
  return 'Bottom 10%';
}

/** One metric of the answer from the session's value and the peer counts. */
export function benchmarkMetric(value: number | null, counts: PeerCounts, minPeers = MIN_PEERS): BenchmarkMetric {
  const base = { value, direction: 'lower_is_better' as const, sample_size: counts.n };
  if (value === null) return { ...base, percentile: 50, label: 'No data' };
  if (counts.n === 0) return { ...base, percentile: 50, label: 'No peers' };
  if (counts.n < minPeers || (counts.otherClients ?? counts.n) < minPeers) return { ...base, percentile: 50, label: 'Not enough peers' };
  const percentile = percentileOf(counts);
  return { ...base, percentile, label: labelOf(percentile) };
}

// ---- the query ----

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
    CASE WHEN ${hosts} > 0 THEN coalesce(${findings}, 0) / ${hosts} END AS findings_per_host,
    CASE WHEN ${all} > 0 THEN ${critHigh} / ${all} WHEN coalesce(${findings}, 0) = 0 THEN 0::float8 END AS critical_high_ratio`;
}

interface BenchmarkRow {
  sample_size: number;
  risk_score: number | null;
  findings_per_host: number | null;
  critical_high_ratio: number | null;
  risk_score_n: number;
  risk_score_worse: number;
  risk_score_equal: number;
  findings_per_host_n: number;
  findings_per_host_worse: number;
  findings_per_host_equal: number;
  critical_high_ratio_n: number;
  critical_high_ratio_worse: number;
  critical_high_ratio_equal: number;
  risk_score_clients: number;
  findings_per_host_clients: number;
  critical_high_ratio_clients: number;
}

function counts(metric: BenchmarkMetricName) {
  const col = sql.ref(`peers.${metric}`);
  const mine = sql.ref(`me.${metric}`);
  return sql`
    count(${col})::int AS ${sql.ref(`${metric}_n`)},
    (count(*) FILTER (WHERE ${col} > ${mine}))::int AS ${sql.ref(`${metric}_worse`)},
    (count(*) FILTER (WHERE ${col} = ${mine}))::int AS ${sql.ref(`${metric}_equal`)},
    (count(DISTINCT peers.client_id) FILTER (WHERE ${col} IS NOT NULL AND peers.client_id IS DISTINCT FROM me.client_id))::int AS ${sql.ref(`${metric}_clients`)}`;
}

export interface Benchmark {
  sample_size: number;
  metrics: Record<BenchmarkMetricName, BenchmarkMetric>;
}

/**
 * One statement: the session's metrics, the latest session of every other client/target
 * pair (DISTINCT ON, newest first; ties broken by session id), and per metric the counts
 * the percentile needs. Returns null when the session does not exist.
 */
export async function computeBenchmark(db: Kysely<Database>, ref: SessionRef, minPeers = MIN_PEERS): Promise<Benchmark | null> {
  const result = await sql<BenchmarkRow>`
    WITH me AS (
      -- NULLIF: sessions without a client (stored under '') count as no client, as before D17.
      SELECT NULLIF(s.client_id, '') AS client_id, s.target, ${metricColumns('s')}
      FROM sessions s WHERE s.client_id = ${ref.clientId} AND s.session_id = ${ref.sessionId}
    ),
    latest AS (
      SELECT DISTINCT ON (s.client_id, s.target) NULLIF(s.client_id, '') AS client_id, s.risk_score, s.metadata
      FROM sessions s, me
      WHERE NOT (NULLIF(s.client_id, '') IS NOT DISTINCT FROM me.client_id AND s.target IS NOT DISTINCT FROM me.target)
      ORDER BY s.client_id, s.target, s.uploaded_at DESC, s.session_id DESC
    ),
    peers AS (
      SELECT 1 AS one, latest.client_id, ${metricColumns('latest')} FROM latest
    )
    SELECT
      me.risk_score, me.findings_per_host, me.critical_high_ratio,
      count(peers.one)::int AS sample_size,
      ${counts('risk_score')},
      ${counts('findings_per_host')},
      ${counts('critical_high_ratio')}
    FROM me LEFT JOIN peers ON true
    GROUP BY me.client_id, me.risk_score, me.findings_per_host, me.critical_high_ratio
  `.execute(db);
  const row = result.rows[0];
  if (row === undefined) return null;
  const metric = (name: BenchmarkMetricName) =>
    benchmarkMetric(row[name], { n: row[`${name}_n`], worse: row[`${name}_worse`], equal: row[`${name}_equal`], otherClients: row[`${name}_clients`] }, minPeers);
  return {
    sample_size: row.sample_size,
    metrics: Object.fromEntries(BENCHMARK_METRICS.map((name) => [name, metric(name)])) as Record<BenchmarkMetricName, BenchmarkMetric>,
  };
}
