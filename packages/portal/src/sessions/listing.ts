import type { Selectable } from 'kysely';
import { SESSION_ID_PATTERN, type SessionStatus, type SessionView } from '@svc/protocol';
import { inScope, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import type { SessionNotesTable, StatusHistoryTable } from '../db/schema.ts';
import { DomainError } from '../domain/errors.ts';
import { resolveSession } from './access.ts';
import { storable } from './derive.ts';
import { presentSession } from './present.ts';
import { notesOf, type SessionRow, sessionPage, shareTokenOf, statusHistoryOf } from './queries.ts';
import { notifyExpiringSessions } from './retention.ts';

export interface ListFilter {
  /** null: every client (admins). */
  clientIds: string[] | null;
  clientId?: string;
  status?: SessionStatus;
  target?: string;
  limit: number;
  cursor?: string;
}

/**
 * Keyset cursor over (uploaded_at, session_id, client_id), newest first. Opaque to clients.
 * The client id is part of it because one session id may exist under several clients
 * (D17) with the same upload instant: without it a page boundary between them would skip one.
 */
function encodeCursor(uploadedAt: Date, sessionId: string, clientId: string): string {
  return Buffer.from(JSON.stringify([uploadedAt.toISOString(), sessionId, clientId])).toString('base64url');
}

const SESSION_ID = new RegExp(SESSION_ID_PATTERN);
/** 9999-12-31T23:59:59.999Z: later (or negative) years are outside what we ever write, and PostgreSQL refuses some of them. */
const MAX_TIME = 253_402_300_799_999;

function decodeCursor(cursor: string): [Date, string, string | null] {
  try {
    const [at, id, client, ...rest] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    const date = new Date(String(at));
    const t = date.getTime();
    // Only what encodeCursor produces: a real instant, a valid session id and a client id
    // PostgreSQL can store (no NUL or other text that would fail there with a 500). A
    // cursor of a portal before D17 has no client id; it pages as it did then.
    if (typeof id !== 'string' || !SESSION_ID.test(id) || Number.isNaN(t) || t < 0 || t > MAX_TIME || rest.length > 0)
      throw new Error('bad cursor');
    if (client !== undefined && (typeof client !== 'string' || client.length > 1024 || !storable(client)))
      throw new Error('bad cursor');
    return [date, id, client ?? null];
  } catch {
    throw new DomainError('invalid.cursor', 'Invalid cursor');
  }
}

async function listSessions(
  ctx: AppContext,
  f: ListFilter,
): Promise<{ sessions: SessionView[]; next_cursor: string | null }> {
  if (f.clientIds !== null && f.clientIds.length === 0) return { sessions: [], next_cursor: null };
  // No stored target holds what PostgreSQL cannot store; asking it would be a 500.
  if (f.target !== undefined && !storable(f.target)) return { sessions: [], next_cursor: null };
  const rows = await sessionPage(ctx.db, {
    clientIds: f.clientIds,
    clientId: f.clientId,
    status: f.status,
    target: f.target,
    before: f.cursor === undefined ? undefined : decodeCursor(f.cursor),
    limit: f.limit + 1,
  });
  const page = rows.slice(0, f.limit);
  const last = page.at(-1);
  return {
    sessions: page.map((r) => presentSession(r, r.token, ctx.config.baseUrl)),
    next_cursor: rows.length > f.limit && last ? encodeCursor(last.uploaded_at, last.session_id, last.client_id) : null,
  };
}

interface SessionsRequest {
  clientId?: string | undefined;
  status?: SessionStatus | undefined;
  target?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

/**
 * A user's listing (D5): newest first, 50 a page unless `limit` says otherwise. A named
 * client outside the user's scope is refused. Listing is also where `report_expiring` fires (D6).
 */
export async function listSessionsFor(
  ctx: AppContext,
  user: UserPrincipal,
  q: SessionsRequest,
): Promise<{ sessions: SessionView[]; next_cursor: string | null }> {
  if (q.clientId !== undefined && !inScope(user, q.clientId))
    throw new DomainError('forbidden.client', 'Access to this client is not allowed');
  await notifyExpiringSessions(ctx);
  return listSessions(ctx, {
    clientIds: user.clientIds,
    clientId: q.clientId,
    status: q.status,
    target: q.target,
    limit: q.limit ?? 50,
    cursor: q.cursor,
  });
}

export interface SessionDetail {
  row: SessionRow;
  shareToken: string | null;
  history: Selectable<StatusHistoryTable>[];
  notes: Selectable<SessionNotesTable>[];
}

/** One session in the user's scope with its share token, status history and notes (D5, D17). */
export async function sessionDetail(
  ctx: AppContext,
  user: UserPrincipal,
  sessionId: string,
  clientId: string | undefined,
): Promise<SessionDetail> {
  const row = await resolveSession(ctx, user.clientIds, sessionId, clientId);
  const ref = { clientId: row.client_id, sessionId };
  const [shareToken, history, notes] = await Promise.all([
    shareTokenOf(ctx.db, ref),
    statusHistoryOf(ctx.db, ref),
    notesOf(ctx.db, ref),
  ]);
  return { row, shareToken, history, notes };
}
