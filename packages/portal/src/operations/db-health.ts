import { sql } from 'kysely';
import type { UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';

const MB = 1024 * 1024;
const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * SPEC's table names mapped onto our schema: `agents` and `agent_heartbeats` are one
 * table here (agents holds the latest heartbeat; `agents` counts the registered ones),
 * and `webhooks` is the delivery log.
 */
async function tableCounts(ctx: AppContext): Promise<Record<string, number>> {
  const { rows } = await sql<Record<string, number>>`
    SELECT
      (SELECT count(*) FROM sessions)::int AS sessions,
      (SELECT count(*) FROM session_notes)::int AS session_notes,
      (SELECT count(*) FROM status_history)::int AS status_history,
      (SELECT count(*) FROM share_tokens)::int AS share_tokens,
      (SELECT count(*) FROM agents)::int AS agent_heartbeats,
      (SELECT count(*) FROM agents WHERE deregistered_at IS NULL)::int AS agents,
      (SELECT count(*) FROM webhook_subscriptions)::int AS webhook_subscriptions,
      (SELECT count(*) FROM webhook_deliveries)::int AS webhooks,
      (SELECT count(*) FROM audit_events)::int AS audit_events
  `.execute(ctx.db);
  return rows[0] ?? {};
}

/** D16: the deployment's own PostgreSQL, its size, and the storage limit of SVC_STORAGE_LIMIT_MB. */
export async function databaseHealth(ctx: AppContext, user: UserPrincipal) {
  const scope = user.clientIds;
  const { rows } = await sql<{
    size_bytes: string;
    size_human: string;
    connections: number;
    host: string | null;
    version: string;
    database_name: string;
    max_connections: string;
  }>`
    SELECT pg_database_size(current_database())::text AS size_bytes,
           pg_size_pretty(pg_database_size(current_database())) AS size_human,
           (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database())::int AS connections,
           host(inet_server_addr()) AS host,
           current_setting('server_version') AS version,
           current_database() AS database_name,
           current_setting('max_connections') AS max_connections
  `.execute(ctx.db);
  const info = rows[0]!;
  const sizeBytes = Number(info.size_bytes);

  // Tenant data (activity, per-client statistics) is scoped; counts and sizes are not tenant data.
  let activity = ctx.db
    .selectFrom('audit_events')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(20);
  let byStatus = ctx.db
    .selectFrom('sessions')
    .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
    .groupBy('status');
  let byClient = ctx.db
    .selectFrom('sessions')
    .select(['client_id', (eb) => eb.fn.max('client').as('client'), (eb) => eb.fn.countAll<string>().as('n')])
    .groupBy('client_id')
    .orderBy('n', 'desc')
    .orderBy('client_id')
    .limit(100);
  let recent = ctx.db
    .selectFrom('sessions')
    .select(['session_id', 'client', 'target', 'risk_score', 'risk_grade', 'uploaded_at'])
    .orderBy('uploaded_at', 'desc')
    .orderBy('session_id', 'desc')
    .limit(10);
  if (scope !== null) {
    // No client ids: nothing (a NUL placeholder id would be refused by PostgreSQL's text type).
    const ids = scope;
    const none = sql<boolean>`false`;
    activity = ids.length > 0 ? activity.where('client_id', 'in', ids) : activity.where(none);
    byStatus = ids.length > 0 ? byStatus.where('client_id', 'in', ids) : byStatus.where(none);
    byClient = ids.length > 0 ? byClient.where('client_id', 'in', ids) : byClient.where(none);
    recent = ids.length > 0 ? recent.where('client_id', 'in', ids) : recent.where(none);
  }
  const [counts, events, statuses, clients, uploads] = await Promise.all([
    tableCounts(ctx),
    activity.execute(),
    byStatus.execute(),
    byClient.execute(),
    recent.execute(),
  ]);

  const limitMb = ctx.config.storageLimitMb;
  const usedMb = round2(sizeBytes / MB);
  // From the exact size: dividing the already rounded MB figure is off by up to 0.5 % of the
  // limit per MB (a 7.6294 MB database against a 1 MB limit is 762.94 %, not 763 %).
  const pct = limitMb === null ? null : round2((sizeBytes / MB / limitMb) * 100);
  return {
    table_counts: counts,
    database_info: {
      size_bytes: sizeBytes,
      size_human: info.size_human,
      active_connections: info.connections,
      host: info.host ?? 'local socket',
      version: info.version,
      database_name: info.database_name,
      max_connections: Number(info.max_connections),
      provider: ctx.config.databaseUrl === null ? 'embedded-postgresql' : 'postgresql',
    },
    recent_activity: events.map((e) => ({
      event_type: e.event_type,
      session_id: e.session_id,
      actor: e.actor,
      data: e.data,
      created_at: e.created_at.toISOString(),
      timestamp: e.created_at.toISOString(),
    })),
    session_stats: {
      by_status: Object.fromEntries(statuses.map((s) => [s.status, Number(s.n)])),
      // Sessions without a client are stored under '' (D17) and shown as null, as before.
      by_client: clients.map((c) => ({
        client_id: c.client_id === '' ? null : c.client_id,
        client: c.client as string | null,
        count: Number(c.n),
      })),
      recent_uploads: uploads.map((u) => ({ ...u, uploaded_at: u.uploaded_at.toISOString() })),
    },
    neon_usage: {
      tier: ctx.config.databaseUrl === null ? 'embedded' : 'self-hosted',
      storage_limit_mb: limitMb,
      storage_used_mb: usedMb,
      storage_mb: usedMb,
      storage_pct: pct,
      storage_percent: pct,
      active_connections: info.connections,
      health: pct === null || pct < 80 ? 'healthy' : pct < 95 ? 'warning' : 'critical',
    },
  };
}
