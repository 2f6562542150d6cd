import fs from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { sampleValue, scrape } from '@svc/test-support/metrics-scrape';
import { type PortalProcess, startPortalProcess } from '../lib/portal.ts';

/** The heartbeat benches' fleet: agents and a command backlog seeded in SQL, and the portals that serve it. */

export const PATH = '/api/health';
export const CLIENT_ID = 'bench-heartbeat';
export const VERSION = '4.2.3';

/** Agent n (1-based) of the seeded fleet: `svcd_` + 8 hex digits, like a real daemon's id. */
export const agentIdOf = (n: number): string => `svcd_${n.toString(16).padStart(8, '0')}`;

/** The portal's embedded PostgreSQL, as its superuser (credentials file in the data dir). */
export function databaseUrlOf(portal: PortalProcess): string {
  const { password } = JSON.parse(fs.readFileSync(path.join(portal.dataDir, 'postgres-credentials.json'), 'utf8')) as {
    password: string;
  };
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${portal.pgPort}/svc`;
}

/**
 * The portal again, on the first one's database (over its socket when it has one, as the first):
 * a replica. `batchMax` '0' turns batching off (the single path).
 */
export async function startReplica(
  first: PortalProcess,
  databaseUrl: string,
  opts: { pool: number; verbose: boolean; batchMax?: string; env?: Record<string, string>; nodeArgs?: string[] },
) {
  const socketDir = path.join(first.dataDir, 'postgres-run');
  const socket = fs.existsSync(path.join(socketDir, `.s.PGSQL.${first.pgPort}`));
  return startPortalProcess({
    echo: opts.verbose,
    nodeArgs: opts.nodeArgs ?? [],
    env: {
      SVC_DB_POOL_MAX: String(opts.pool),
      ...(opts.batchMax === undefined ? {} : { SVC_HEARTBEAT_BATCH_MAX: opts.batchMax }),
      // The first portal's key to the signing key it stored in the database (replicas share it).
      SVC_IDENTITY_KEY_ENCRYPTION_KEY: fs.readFileSync(path.join(first.dataDir, 'identity-key'), 'utf8').trim(),
      DATABASE_URL: socket ? `${databaseUrl}?host=${encodeURIComponent(socketDir)}` : databaseUrl,
      ...opts.env,
    },
  });
}

export async function seed(
  db: pg.Client,
  opts: { agents: number; pending: number },
  licenseId: string,
): Promise<{ agentsWithCommands: number; commands: number; firstAgentWithCommands: number }> {
  await db.query(
    `INSERT INTO agents (agent_id, client_id, license_id, key_tier, version, sent_at, status, uptime_seconds, received_at, first_seen_at)
     SELECT 'svcd_' || lpad(to_hex(n), 8, '0'), $1, $2, 'business', $3, now(), 'running', 0, now(), now()
     FROM generate_series(1, $4::int) AS n`,
    [CLIENT_ID, licenseId, VERSION, opts.agents],
  );
  // Two commands (different priorities) for every `step`-th agent: `pending` in all, spread over the fleet.
  const perAgent = opts.pending >= 2 ? 2 : 1;
  const agentsWithCommands = Math.floor(opts.pending / perAgent);
  const step = Math.max(1, Math.floor(opts.agents / agentsWithCommands));
  await db.query(
    `INSERT INTO agent_commands (client_id, agent_id, command_type, payload, priority, created_by, created_at)
     SELECT $4, 'svcd_' || lpad(to_hex(i * $1::int), 8, '0'), k.command_type, k.payload::jsonb, k.priority, 'bench@bench.invalid', now() - make_interval(secs => k.age)
     FROM generate_series(1, $2::int) AS i
     CROSS JOIN (VALUES ('restart', '{}', 5, 60), ('set_log_level', '{"level":"debug"}', 8, 30)) AS k(command_type, payload, priority, age)
     WHERE k.priority = 5 OR $3::int = 2`,
    [step, agentsWithCommands, perAgent, CLIENT_ID],
  );
  await db.query('VACUUM (ANALYZE) agents, agent_commands');
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM agent_commands WHERE status = 'pending'`,
  );
  return { agentsWithCommands, commands: rows[0]?.n ?? 0, firstAgentWithCommands: step };
}

/** Every run starts from the same backlog and a clean slate: claimed commands back to pending, dead rows gone, dirty pages written. */
export async function resetBacklog(db: pg.Client): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE agent_commands SET status = 'pending', sent_at = NULL WHERE status <> 'pending'`,
  );
  await db.query('VACUUM (ANALYZE) agents, agent_commands');
  await db.query('CHECKPOINT');
  return rowCount ?? 0;
}

/** What a portal's GET /metrics says of its heartbeats: written in all, and in batch statements. */
export interface BatchCounts {
  accepted: number;
  batches: number;
  batched: number;
}

export async function batchCounts(portal: PortalProcess, token: string): Promise<BatchCounts> {
  const s = await scrape(portal.url, token);
  if (s.status !== 200) throw new Error(`GET /metrics of ${portal.url}: HTTP ${s.status}`);
  return {
    accepted: sampleValue(s, 'svc_heartbeats_total', { outcome: 'accepted' }),
    batches: sampleValue(s, 'svc_heartbeat_batch_size_count'),
    batched: sampleValue(s, 'svc_heartbeat_batch_size_sum'),
  };
}

/** Between two readings: heartbeats per batch statement, and the share of heartbeats written in one. */
export function batchShape(before: BatchCounts, after: BatchCounts): { meanBatch: number; batchedShare: number } {
  const batches = after.batches - before.batches;
  const batched = after.batched - before.batched;
  const accepted = after.accepted - before.accepted;
  return {
    meanBatch: batches > 0 ? Math.round((batched / batches) * 10) / 10 : 0,
    batchedShare: accepted > 0 ? Math.round((batched / accepted) * 1000) / 1000 : 0,
  };
}
