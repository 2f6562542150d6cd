import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import { auditEventsCounted } from '../audit/queries.ts';
import type { Database } from '../db/schema.ts';

/**
 * Sessions are summed from session_counts (migration 0029), audit events from the closed hours'
 * counts (migration 0032), both exact without reading every row. The
 * table names mapped onto our schema: `agents` and `agent_heartbeats` are one
 * table here (agents holds the latest heartbeat; `agents` counts the registered ones),
 * and `webhooks` is the delivery log.
 */
export async function tableCounts(db: Kysely<Database>): Promise<Record<string, number>> {
  const { rows } = await sql<Record<string, number>>`
    SELECT
      (SELECT COALESCE(sum(n), 0) FROM session_counts)::int AS sessions,
      (SELECT count(*) FROM session_notes)::int AS session_notes,
      (SELECT count(*) FROM status_history)::int AS status_history,
      (SELECT count(*) FROM share_tokens)::int AS share_tokens,
      (SELECT count(*) FROM agents)::int AS agent_heartbeats,
      (SELECT count(*) FROM agents WHERE deregistered_at IS NULL)::int AS agents,
      (SELECT count(*) FROM webhook_subscriptions)::int AS webhook_subscriptions,
      (SELECT count(*) FROM webhook_deliveries)::int AS webhooks,
      ${auditEventsCounted}::int AS audit_events
  `.execute(db);
  return rows[0] ?? {};
}

export interface DatabaseFacts {
  size_bytes: string;
  size_human: string;
  connections: number;
  host: string | null;
  version: string;
  database_name: string;
  max_connections: string;
  /** Bytes of every stored session file (storage_usage, migration 0012). */
  session_files_bytes: string;
}

/** The portal's own database as PostgreSQL describes it. */
export async function databaseFacts(db: Kysely<Database>): Promise<DatabaseFacts> {
  const { rows } = await sql<DatabaseFacts>`
    SELECT size::text AS size_bytes,
           pg_size_pretty(size) AS size_human,
           (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database())::int AS connections,
           host(inet_server_addr()) AS host,
           current_setting('server_version') AS version,
           current_database() AS database_name,
           current_setting('max_connections') AS max_connections,
           (SELECT COALESCE(SUM(bytes), 0) FROM storage_usage)::text AS session_files_bytes
    -- Once: the size walks every file of the database.
    FROM (SELECT pg_database_size(current_database()) AS size) d
  `.execute(db);
  return rows[0] as DatabaseFacts;
}

/** Tenant rows of these clients only; null: every client. */
export type ClientScope = string[] | null;

// No client ids matches nothing: a placeholder id would be refused by PostgreSQL's text type.
const NONE = sql<boolean>`false`;

export function recentAuditEvents(db: Kysely<Database>, scope: ClientScope) {
  const q = db.selectFrom('audit_events').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(20);
  if (scope === null) return q.execute();
  return (scope.length > 0 ? q.where('client_id', 'in', scope) : q.where(NONE)).execute();
}

/** From session_counts (migration 0029): at most clients × 4 rows, whatever the sessions. */
export function sessionsByStatus(db: Kysely<Database>, scope: ClientScope) {
  const q = db
    .selectFrom('session_counts')
    .select(['status', sql<string>`sum(n)`.as('n')])
    .groupBy('status')
    .having(sql<boolean>`sum(n) > 0`);
  if (scope === null) return q.execute();
  return (scope.length > 0 ? q.where('client_id', 'in', scope) : q.where(NONE)).execute();
}

/**
 * The 100 clients with the most sessions (session_counts), each with the greatest of its
 * client names (sessions_client_name_idx: one index probe per client listed).
 */
export function sessionsByClient(db: Kysely<Database>, scope: ClientScope) {
  let counts = db
    .selectFrom('session_counts')
    .select(['client_id', sql<string>`sum(n)`.as('n')])
    .groupBy('client_id')
    .having(sql<boolean>`sum(n) > 0`)
    .orderBy('n', 'desc')
    .orderBy('client_id')
    .limit(100);
  if (scope !== null) counts = scope.length > 0 ? counts.where('client_id', 'in', scope) : counts.where(NONE);
  return db
    .selectFrom(counts.as('c'))
    .select([
      'c.client_id',
      (eb) =>
        eb
          .selectFrom('sessions')
          .select((e) => e.fn.max('sessions.client').as('client'))
          .whereRef('sessions.client_id', '=', 'c.client_id')
          .as('client'),
      'c.n',
    ])
    .orderBy('c.n', 'desc')
    .orderBy('c.client_id')
    .execute();
}

export function recentUploads(db: Kysely<Database>, scope: ClientScope) {
  const q = db
    .selectFrom('sessions')
    .select(['session_id', 'client_id', 'client', 'target', 'risk_score', 'risk_grade', 'uploaded_at'])
    .orderBy('uploaded_at', 'desc')
    .orderBy('session_id', 'desc')
    .limit(10);
  if (scope === null) return q.execute();
  return (scope.length > 0 ? q.where('client_id', 'in', scope) : q.where(NONE)).execute();
}

/** Straight through the pool, not Kysely: the probe should cost one round trip and nothing else. */
export async function selectOne(pool: pg.Pool): Promise<void> {
  await pool.query('SELECT 1');
}
