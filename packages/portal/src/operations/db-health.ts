import type { Kysely } from 'kysely';
import type { Config } from '../config/index.ts';
import type { Database } from '../db/schema.ts';
import { clientIdOut } from '../sessions/present.ts';
import {
  databaseFacts,
  recentAuditEvents,
  recentUploads,
  sessionsByClient,
  sessionsByStatus,
  tableCounts,
} from './queries.ts';

const MB = 1024 * 1024;
const round2 = (n: number) => Math.round(n * 100) / 100;

export interface DatabaseHealthDeps {
  db: Kysely<Database>;
  config: Pick<Config, 'storageLimitMb' | 'databaseUrl'>;
}

/**
 * docs/api.md#operations: the deployment's own PostgreSQL, its size, and the storage limit of SVC_STORAGE_LIMIT_MB.
 * Tenant data (activity, per-client statistics) is limited to the caller's clients; counts and
 * sizes are not tenant data.
 */
export async function databaseHealth(deps: DatabaseHealthDeps, caller: { clientIds: string[] | null }) {
  const { db, config } = deps;
  const scope = caller.clientIds;
  const [info, counts, events, statuses, clients, uploads] = await Promise.all([
    databaseFacts(db),
    tableCounts(db),
    recentAuditEvents(db, scope),
    sessionsByStatus(db, scope),
    sessionsByClient(db, scope),
    recentUploads(db, scope),
  ]);
  const sizeBytes = Number(info.size_bytes);

  const limitMb = config.storageLimitMb;
  // What SVC_STORAGE_LIMIT_MB limits: the database and the stored session files together.
  const usedBytes = sizeBytes + Number(info.session_files_bytes);
  const usedMb = round2(usedBytes / MB);
  // From the exact size: dividing the already rounded MB figure is off by up to 0.5 % of the
  // limit per MB (a 7.6294 MB database against a 1 MB limit is 762.94 %, not 763 %).
  const pct = limitMb === null ? null : round2((usedBytes / MB / limitMb) * 100);
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
      provider: config.databaseUrl === null ? 'embedded-postgresql' : 'postgresql',
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
      // Sessions without a client are stored under '' (docs/api.md#ids-are-per-client) and shown as null.
      by_client: clients.map((c) => ({
        client_id: c.client_id === '' ? null : c.client_id,
        client: c.client as string | null,
        count: Number(c.n),
      })),
      recent_uploads: uploads.map((u) => ({
        ...u,
        client_id: clientIdOut(u.client_id),
        uploaded_at: u.uploaded_at.toISOString(),
      })),
    },
    neon_usage: {
      tier: config.databaseUrl === null ? 'embedded' : 'self-hosted',
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
