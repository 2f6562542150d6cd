import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { PortalProcess } from '../lib/portal.ts';
import { onCleanup } from '../lib/cleanup.ts';

/**
 * Cumulative counters of the portal's embedded PostgreSQL, read through a connection of
 * our own: how many transactions, inserted/updated rows and WAL flushes a phase caused.
 * PostgreSQL's backends publish their counters at most once a second while busy, so a
 * delta over a phase of several seconds is approximate (a diagnostic, not a figure).
 */
export interface PgCounters {
  commits: number;
  inserted: number;
  updated: number;
  walRecords: number;
  walSyncs: number;
}

export interface PgStats {
  snapshot(): Promise<PgCounters>;
}

export async function openPgStats(portal: PortalProcess): Promise<PgStats> {
  const { password } = JSON.parse(fs.readFileSync(path.join(portal.dataDir, 'postgres-credentials.json'), 'utf8')) as {
    password: string;
  };
  const client = new pg.Client({
    connectionString: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${portal.pgPort}/svc`,
    application_name: 'bench-stats',
  });
  await client.connect();
  client.on('error', () => undefined);
  onCleanup('close the statistics connection', () => client.end().catch(() => undefined));
  return {
    async snapshot() {
      const db = await client.query<{ commits: string; inserted: string; updated: string }>(
        'SELECT xact_commit AS commits, tup_inserted AS inserted, tup_updated AS updated FROM pg_stat_database WHERE datname = current_database()',
      );
      const wal = await client.query<{ wal_records: string; wal_sync: string }>(
        'SELECT wal_records, wal_sync FROM pg_stat_wal',
      );
      const d = db.rows[0];
      const w = wal.rows[0];
      return {
        commits: Number(d?.commits ?? Number.NaN),
        inserted: Number(d?.inserted ?? Number.NaN),
        updated: Number(d?.updated ?? Number.NaN),
        walRecords: Number(w?.wal_records ?? Number.NaN),
        walSyncs: Number(w?.wal_sync ?? Number.NaN),
      };
    },
  };
}

/** Per-event deltas between two snapshots. */
export function perEvent(a: PgCounters, b: PgCounters, events: number): PgCounters {
  const d = (k: keyof PgCounters): number => (events > 0 ? Math.round(((b[k] - a[k]) / events) * 10) / 10 : Number.NaN);
  return {
    commits: d('commits'),
    inserted: d('inserted'),
    updated: d('updated'),
    walRecords: d('walRecords'),
    walSyncs: d('walSyncs'),
  };
}
