/**
 * The scale of the read-path probe, written straight into the portal's own database with
 * one INSERT … SELECT over generate_series per table (seconds, not the hours uploads would take):
 *
 * - sessions: --sessions over --clients (client-000 …), --targets per client (10.<c>.<t>.0/24),
 *   uploaded one every 60 s back from now (200,000 sessions: the last 139 days), scanned an hour
 *   before, kept 140 days after upload (so some expire within the 7-day notice window), status
 *   new 60 %, in review 20 %, resolved 15 %, archived 5 %, a risk score and findings counts;
 *   those already inside the 7-day notice window marked notified, as the listing of a running
 *   portal would have marked them (else the first listings would notify 10,000 at once);
 * - audit events: --events spread evenly over the last 89.9 days (inside the 90-day window
 *   the log keeps), every event type in turn, each naming one seeded session and its client.
 *
 * Every session and event goes through the tables' triggers as an upload's would (storage
 * usage, first upload, and whatever counters later migrations keep), then VACUUM ANALYZE, as
 * autovacuum would leave the tables.
 */
import { deriveMetadata } from '@svc/portal/sessions/derive';
import { AUDIT_EVENT_TYPES } from '@svc/protocol';
import type pg from 'pg';

export interface ReadScale {
  sessions: number;
  clients: number;
  targets: number;
  events: number;
}

export const clientIdOf = (c: number): string => `client-${String(c).padStart(3, '0')}`;
export const targetOf = (c: number, t: number): string => `10.${c}.${t}.0/24`;
export const sessionIdOf = (g: number): string => `bench_${String(g).padStart(7, '0')}`;

const SESSIONS_SQL = `
INSERT INTO sessions (session_id, client_id, client, target, status, risk_score, risk_grade, metadata, files,
                      uploaded_at, first_uploaded_at, scanned_at, updated_at, expires_at, expiry_notified_at)
SELECT 'bench_' || lpad(g::text, 7, '0'), 'client-' || lpad((g % $2)::text, 3, '0'), 'Client ' || (g % $2),
       '10.' || (g % $2) || '.' || ((g / $2) % $3) || '.0/24',
       CASE WHEN (g / $2) % 20 < 12 THEN 'new' WHEN (g / $2) % 20 < 16 THEN 'in_review' WHEN (g / $2) % 20 < 19 THEN 'resolved' ELSE 'archived' END,
       (g * 7919 % 101)::float8, (ARRAY['A', 'B', 'C', 'D', 'F'])[1 + g % 5],
       $4::jsonb || jsonb_build_object('session_id', 'bench_' || lpad(g::text, 7, '0'),
         'client_id', 'client-' || lpad((g % $2)::text, 3, '0'), 'client', 'Client ' || (g % $2),
         'target', '10.' || (g % $2) || '.' || ((g / $2) % $3) || '.0/24',
         'risk_score', (g * 7919 % 101)::float8, 'risk_grade', (ARRAY['A', 'B', 'C', 'D', 'F'])[1 + g % 5],
         'total_findings', g % 40, 'total_hosts', 1 + g % 9,
         'severity_summary', jsonb_build_object('critical', g % 3, 'high', g % 5, 'medium', g % 7, 'low', g % 11, 'info', g % 13)),
       '{}'::jsonb, at, at, at - interval '1 hour', at, at + interval '140 days',
       CASE WHEN at + interval '133 days' <= now() THEN at + interval '133 days' END
FROM generate_series(1, $1::int) g, LATERAL (SELECT date_trunc('second', now()) - make_interval(secs => g * 60) AS at) t`;

const EVENTS_SQL = `
INSERT INTO audit_events (event_type, session_id, client_id, actor, data, created_at)
SELECT ($4::text[])[1 + e % array_length($4::text[], 1)],
       'bench_' || lpad((1 + e % $2)::text, 7, '0'), 'client-' || lpad(((1 + e % $2) % $3)::text, 3, '0'),
       'bench-admin@bench.invalid', jsonb_build_object('n', e),
       now() - (e::float8 / $1) * interval '89.9 days'
FROM generate_series(0, $1::int - 1) e`;

/** Seeds sessions and audit events, then VACUUM ANALYZE; logs how long each took. */
export async function seedReads(db: pg.Client, s: ReadScale, log: (line: string) => void): Promise<void> {
  let t = performance.now();
  // Every other field as an upload derives it from a session file (the listing's schema checks them).
  const template = deriveMetadata({
    doc: { metadata: { session_id: 'bench_0000000' }, findings: [] },
    keyClientId: null,
    hasExecSummary: false,
  });
  await db.query(SESSIONS_SQL, [s.sessions, s.clients, s.targets, JSON.stringify(template)]);
  log(`seeded ${s.sessions.toLocaleString('en')} sessions in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  t = performance.now();
  await db.query(EVENTS_SQL, [s.events, s.sessions, s.clients, [...AUDIT_EVENT_TYPES]]);
  log(`seeded ${s.events.toLocaleString('en')} audit events in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  t = performance.now();
  await db.query('VACUUM (ANALYZE) sessions, audit_events');
  log(`VACUUM ANALYZE in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}
