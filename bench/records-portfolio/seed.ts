/**
 * The findings of record of a large portfolio, written straight into the portal's own database
 * (finding_targets, finding_records) with one INSERT … SELECT over generate_series: --clients ×
 * --targets × --records records, in the order a real table fills (by first sighting).
 *
 * Distributions (seeded with setseed, so the same options give the same rows):
 * - severity: critical 4 %, high 16 %, medium 35 %, low 25 %, info 20 %;
 * - status: resolved 30 %, new 15 %, persistent 40 %, in_progress 10 %, deferred 5 % (the last two
 *   set by a person);
 * - first seen: within the last two years, recent ones more often (age = u² × 730 days); last seen
 *   within the last 14 days for open records, between first sighting and now for resolved ones;
 * - due date: first seen + the default due days (critical 15, high 30, medium 90, low 180, info
 *   none), so old open findings are overdue as they are in the field;
 * - CVEs: on 90 % of critical, 60 % of high, 30 % of medium, 10 % of low findings; KEV on 25 % of
 *   critical, 6 % of high and 1 % of medium ones (about 2.3 % of all), EPSS for those with a CVE;
 * - exceptions: 5 % of open records (a quarter of them past their expiry); false positives 2 %;
 * - hosts: 50 per target (10.<client>.<target>.1-50), 10 findings each, on ports of the usual services.
 */
import type pg from 'pg';

export interface PortfolioShape {
  clients: number;
  targets: number;
  records: number;
  /** 0 ≤ seed ≤ 1, for setseed. */
  seed: number;
}

export const clientIdOf = (c: number): string => `client-${String(c).padStart(3, '0')}`;
export const targetOf = (c: number, t: number): string => `10.${c}.${t}.0/24`;
export const hostPrefixOf = (c: number, t: number): string => `10.${c}.${t}.`;

const SEED_SQL = `
INSERT INTO finding_records (
  client_id, target, fingerprint, title, severity, severity_key, rule_id, host, port, protocol,
  cve_ids, kev, epss, status, status_changed, status_source, status_by, prior_status, note, note_source, note_by, note_at,
  exception_reason, exception_approver, exception_approved_at, exception_expiry, exception_source, exception_at,
  disposition, disposition_reason, disposition_by, disposition_at, disposition_source,
  first_seen, first_seen_at, last_seen, last_seen_at, last_observed_at, seen_in, seen_count,
  resolved_at, resolved_in, due_date, updated_at)
WITH g AS MATERIALIZED (
  SELECT n, n / ($2::int * $3::int) AS c, (n / $3::int) % $2::int AS t, n % $3::int AS r,
    random() AS u_sev, random() AS u_st, random() AS u_age, random() AS u_cve, random() AS u_exc,
    random() AS u_fp, random() AS u_seen, random() AS u_epss
  FROM generate_series(0, $1::int * $2::int * $3::int - 1) AS n
), a AS (
  SELECT g.*,
    CASE WHEN u_sev < 0.04 THEN 4 WHEN u_sev < 0.20 THEN 3 WHEN u_sev < 0.55 THEN 2 WHEN u_sev < 0.80 THEN 1 ELSE 0 END AS sk,
    CASE WHEN u_st < 0.30 THEN 'resolved' WHEN u_st < 0.45 THEN 'new' WHEN u_st < 0.85 THEN 'persistent'
         WHEN u_st < 0.95 THEN 'in_progress' ELSE 'deferred' END AS st,
    date_trunc('second', now() - (u_age * u_age) * interval '730 days') AS fs_at
  FROM g
), b AS (
  SELECT a.*,
    (ARRAY['info', 'low', 'medium', 'high', 'critical'])[sk + 1] AS sev,
    u_cve < (ARRAY[0, 0.10, 0.30, 0.60, 0.90])[sk + 1] AS has_cve,
    u_cve < (ARRAY[0, 0, 0.01, 0.06, 0.25])[sk + 1] AS is_kev,
    CASE WHEN st = 'resolved' THEN fs_at + (now() - fs_at) * u_seen
         ELSE GREATEST(fs_at, date_trunc('second', now() - u_seen * interval '14 days')) END AS ls_at,
    st <> 'resolved' AND u_exc < 0.05 AS has_exc,
    u_fp < 0.02 AS is_fp,
    (r % 6) AS rule
  FROM a
)
SELECT
  'client-' || lpad(c::text, 3, '0'), '10.' || c || '.' || t || '.0/24',
  encode(sha256(convert_to('bench-record-' || n, 'UTF8')), 'hex'),
  (ARRAY['DNS version disclosed', 'Missing security headers', 'SSH weak key exchange', 'TLS 1.0 enabled', 'SMBv1 enabled'])[sk + 1]
    || ' (' || (ARRAY['a', 'b', 'c', 'd', 'e', 'f'])[rule + 1] || ')',
  sev, sk, 'svc.' || sev || '.' || rule,
  '10.' || c || '.' || t || '.' || (1 + r % 50),
  (ARRAY[53, 80, 22, 443, 445])[sk + 1] + rule * 1000, CASE WHEN sk = 0 THEN 'udp' ELSE 'tcp' END,
  CASE WHEN has_cve THEN ARRAY['CVE-' || (2014 + n % 11) || '-' || (1000 + n % 48000)] ELSE '{}'::text[] END,
  is_kev, CASE WHEN has_cve THEN round((u_epss ^ 3)::numeric, 5)::float8 END,
  st, CASE WHEN st IN ('in_progress', 'deferred') THEN fs_at + (ls_at - fs_at) / 2 ELSE fs_at END,
  CASE WHEN st IN ('in_progress', 'deferred') THEN 'person' ELSE 'scan' END,
  CASE WHEN st IN ('in_progress', 'deferred') THEN 'user:analyst@bench.invalid' END,
  CASE WHEN st = 'persistent' THEN 'new' END,
  CASE WHEN st IN ('in_progress', 'deferred') THEN 'Ticket SEC-' || (n % 9000 + 1000) || ' opened with the owner' ELSE '' END,
  CASE WHEN st IN ('in_progress', 'deferred') THEN 'person' END,
  CASE WHEN st IN ('in_progress', 'deferred') THEN 'user:analyst@bench.invalid' END,
  CASE WHEN st IN ('in_progress', 'deferred') THEN fs_at + (ls_at - fs_at) / 2 END,
  CASE WHEN has_exc THEN 'Compensating control: the host is on an isolated management VLAN' END,
  CASE WHEN has_exc THEN 'user:ciso@bench.invalid' END,
  CASE WHEN has_exc THEN fs_at + interval '3 days' END,
  CASE WHEN has_exc THEN to_char(current_date + ((u_exc / 0.05 - 0.25) * 360)::int, 'YYYY-MM-DD') END,
  CASE WHEN has_exc THEN 'person' END,
  CASE WHEN has_exc THEN fs_at + interval '3 days' END,
  CASE WHEN is_fp THEN 'false_positive' END,
  CASE WHEN is_fp THEN 'Banner only: the vendor backported the fix' END,
  CASE WHEN is_fp THEN 'user:analyst@bench.invalid' END,
  CASE WHEN is_fp THEN fs_at + interval '1 day' END,
  CASE WHEN is_fp THEN 'person' END,
  to_char(fs_at, 'YYYYMMDD_HH24MISS'), fs_at, to_char(ls_at, 'YYYYMMDD_HH24MISS'), ls_at, ls_at,
  ARRAY(SELECT to_char(ls_at - i * interval '7 days', 'YYYYMMDD_HH24MISS')
        FROM generate_series(0, LEAST(50, 1 + floor(extract(epoch FROM ls_at - fs_at) / 604800)::int) - 1) AS i),
  1 + floor(extract(epoch FROM ls_at - fs_at) / 604800)::int,
  CASE WHEN st = 'resolved' THEN LEAST(now(), ls_at + interval '7 days') END,
  CASE WHEN st = 'resolved' THEN to_char(LEAST(now(), ls_at + interval '7 days'), 'YYYYMMDD_HH24MISS') END,
  CASE WHEN sk > 0 THEN to_char(fs_at + (ARRAY[180, 90, 30, 15])[sk] * interval '1 day', 'YYYY-MM-DD') END,
  ls_at
FROM b
ORDER BY b.fs_at`;

/**
 * Runs `load` without the table's secondary indexes (those that back no constraint), then
 * builds them again from their own definitions: one sorted build each instead of a million
 * random insertions. The indexes are the portal's, exactly as its migrations made them.
 */
async function withIndexesBuiltAfter<T>(
  db: pg.Client,
  tableName: string,
  load: () => Promise<T>,
): Promise<{ result: T; indexes: string[] }> {
  const { rows } = await db.query<{ name: string; def: string }>(
    `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
     FROM pg_index i WHERE i.indrelid = $1::regclass
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
    [tableName],
  );
  for (const r of rows) await db.query(`DROP INDEX ${r.name}`);
  const out = await load();
  for (const r of rows) await db.query(r.def);
  return { result: out, indexes: rows.map((r) => r.name) };
}

/** Writes the targets and records; answers how many records were written and which indexes were built after. */
export async function seedPortfolio(
  db: pg.Client,
  s: PortfolioShape,
): Promise<{ records: number; indexesBuiltAfter: string[] }> {
  await db.query('SELECT setseed($1)', [s.seed]);
  await db.query(
    `INSERT INTO finding_targets (client_id, target, seeded_at, last_session_id, last_scanned_at, updated_at)
     SELECT 'client-' || lpad(c::text, 3, '0'), '10.' || c || '.' || t || '.0/24', now(),
            to_char(now() - interval '1 day', 'YYYYMMDD_HH24MISS'), now() - interval '1 day', now()
     FROM generate_series(0, $1::int - 1) AS c, generate_series(0, $2::int - 1) AS t`,
    [s.clients, s.targets],
  );
  const { result, indexes } = await withIndexesBuiltAfter(db, 'finding_records', () =>
    db.query(SEED_SQL, [s.clients, s.targets, s.records]),
  );
  return { records: result.rowCount ?? 0, indexesBuiltAfter: indexes };
}

/** How the seeded records are spread: what each filter of the bench selects. */
export async function portfolioFacts(db: pg.Client, today: string): Promise<Record<string, number>> {
  const { rows } = await db.query<Record<string, string>>(
    `SELECT count(*) AS records,
       count(*) FILTER (WHERE severity_key >= 3) AS critical_high,
       count(*) FILTER (WHERE status <> 'resolved') AS open,
       count(*) FILTER (WHERE status <> 'resolved' AND disposition IS NULL
         AND NOT (exception_reason IS NOT NULL AND (exception_expiry IS NULL OR exception_expiry >= $1))
         AND due_date IS NOT NULL AND due_date < $1) AS overdue,
       count(*) FILTER (WHERE kev) AS kev,
       count(*) FILTER (WHERE exception_reason IS NOT NULL AND (exception_expiry IS NULL OR exception_expiry >= $1)) AS accepted,
       count(*) FILTER (WHERE exception_reason IS NOT NULL AND exception_expiry < $1) AS expired,
       count(*) FILTER (WHERE disposition = 'false_positive') AS false_positive,
       pg_total_relation_size('finding_records') AS table_bytes
     FROM finding_records`,
    [today],
  );
  return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Number(v)]));
}

/** Seeds the portfolio with seed 0.33 (the benches' common data), analyses it and logs how long that took; answers the records written. */
export async function seedAnalysed(
  db: pg.Client,
  shape: Omit<PortfolioShape, 'seed'>,
  log: (line: string) => void,
): Promise<number> {
  const t = performance.now();
  const { records } = await seedPortfolio(db, { ...shape, seed: 0.33 });
  await db.query('VACUUM (ANALYZE) finding_records, finding_targets');
  log(
    `seeded ${records.toLocaleString('en')} records and analysed them in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  return records;
}

/**
 * Makes one client's criticals on hosts starting `hostPrefix` exactly `keep`: the surplus (the
 * last by fingerprint) is lowered to high, so a filter over them matches `keep` findings every
 * run. Answers how many there were before; fewer than `keep` is left as it is.
 */
export async function trimCriticals(
  db: pg.Client,
  clientId: string,
  hostPrefix: string,
  keep: number,
): Promise<number> {
  const match = `client_id = $1 AND severity = 'critical' AND host LIKE $2 || '%'`;
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM finding_records WHERE ${match}`, [
    clientId,
    hostPrefix,
  ]);
  const before = rows[0]?.n ?? 0;
  if (before > keep)
    await db.query(
      `UPDATE finding_records SET severity = 'high', severity_key = 3
       WHERE id IN (SELECT id FROM finding_records WHERE ${match} ORDER BY fingerprint OFFSET $3)`,
      [clientId, hostPrefix, keep],
    );
  return before;
}
