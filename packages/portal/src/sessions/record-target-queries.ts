import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { SessionRef, SessionRow } from './queries.ts';

/**
 * The SQL that finds sessions by their record target (docs/findings-of-record.md): the target as
 * the findings of record key it, trimmed, '' for a session that names none.
 */

/**
 * The newest upload of a record target (the target trimmed, '' for none) under one client,
 * with the tier of the key that uploaded it (null: the legacy key, or a key deleted since).
 */
export function newestSessionOfRecordTarget(
  db: Kysely<Database>,
  clientId: string,
  target: string,
): Promise<(SessionRow & { key_tier: string | null }) | undefined> {
  return db
    .selectFrom('sessions')
    .leftJoin('licenses', 'licenses.id', 'sessions.license_id')
    .selectAll('sessions')
    .select('licenses.tier as key_tier')
    .where('sessions.client_id', '=', clientId)
    .where(sql<string>`btrim(COALESCE(sessions.target, ''))`, '=', target)
    .orderBy('sessions.scanned_at', 'desc')
    .orderBy('sessions.session_id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Up to `limit` sessions whose findings are not indexed, newest first (what the backfill indexes next). */
export function unindexedSessions(db: Kysely<Database>, limit: number): Promise<SessionRow[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('session_findings_state as st')
            .select('st.session_id')
            .whereRef('st.client_id', '=', 'sessions.client_id')
            .whereRef('st.session_id', '=', 'sessions.session_id'),
        ),
      ),
    )
    .orderBy('scanned_at', 'desc')
    .limit(limit)
    .execute();
}

/** The sessions of a record target of a client (every target when none is named). */
export async function sessionsOfRecordTarget(
  db: Kysely<Database>,
  clientId: string,
  target: string | undefined,
): Promise<SessionRef[]> {
  let q = db.selectFrom('sessions').select(['client_id', 'session_id']).where('client_id', '=', clientId);
  if (target !== undefined) q = q.where(sql<string>`btrim(COALESCE(target, ''))`, '=', target);
  const rows = await q.execute();
  return rows.map((r) => ({ clientId: r.client_id, sessionId: r.session_id }));
}
