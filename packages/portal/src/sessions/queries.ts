import type { Kysely, Selectable } from 'kysely';
import type { Database, SessionNotesTable, SessionsTable, StatusHistoryTable } from '../db/schema.ts';

export type SessionRow = Selectable<SessionsTable>;

/**
 * D17: sessions are keyed by (client_id, session_id). Sessions uploaded without a client
 * (the legacy key with a file that has no client_id) share one namespace, stored as the
 * empty client id: no real client id is empty, and a key column cannot be NULL. The API
 * shows it as `client_id: null`; a request names it with an empty `client_id=`.
 */
export const NO_CLIENT = '';

export interface SessionRef {
  clientId: string;
  sessionId: string;
}

export function findSession(db: Kysely<Database>, ref: SessionRef): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .executeTakeFirst();
}

/** Every session with this id under `clientId` if named, else within `scope` (null: every client), by client id. */
export function sessionsWithId(
  db: Kysely<Database>,
  sessionId: string,
  where: { clientId: string | undefined; scope: readonly string[] | null },
): Promise<SessionRow[]> {
  let q = db.selectFrom('sessions').selectAll().where('session_id', '=', sessionId);
  if (where.clientId !== undefined) q = q.where('client_id', '=', where.clientId);
  else if (where.scope !== null) q = q.where('client_id', 'in', where.scope);
  return q.orderBy('client_id').execute();
}

/** The session a share token opens, or undefined. The token is the primary key of share_tokens. */
export function findSessionByShareToken(db: Kysely<Database>, token: string): Promise<SessionRow | undefined> {
  return db
    .selectFrom('share_tokens')
    .innerJoin('sessions', (j) =>
      j
        .onRef('sessions.client_id', '=', 'share_tokens.client_id')
        .onRef('sessions.session_id', '=', 'share_tokens.session_id'),
    )
    .selectAll('sessions')
    .where('share_tokens.token', '=', token)
    .executeTakeFirst();
}

/** The session's share token; null while its link is revoked. */
export async function shareTokenOf(db: Kysely<Database>, ref: SessionRef): Promise<string | null> {
  const row = await db
    .selectFrom('share_tokens')
    .select('token')
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .executeTakeFirst();
  return row?.token ?? null;
}

export function statusHistoryOf(db: Kysely<Database>, ref: SessionRef): Promise<Selectable<StatusHistoryTable>[]> {
  return db
    .selectFrom('status_history')
    .selectAll()
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .orderBy('changed_at')
    .orderBy('id')
    .execute();
}

export function notesOf(db: Kysely<Database>, ref: SessionRef): Promise<Selectable<SessionNotesTable>[]> {
  return db
    .selectFrom('session_notes')
    .selectAll()
    .where('client_id', '=', ref.clientId)
    .where('session_id', '=', ref.sessionId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
