import {
  isValidSessionId,
  type SessionClientsResponse,
  type SessionSort,
  type SessionStatus,
  type SessionView,
} from '@svc/protocol';
import { inScope, type UserPrincipal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { cursorFields, encodeCursor, isIsoInstant } from '../domain/cursor.ts';
import { DomainError } from '../domain/errors.ts';
import { resolveSession } from './access.ts';
import { storable } from './derive.ts';
import { clientIdOut, presentSession } from './present.ts';
import {
  notesOf,
  type SessionFilterQuery,
  type SessionPageQuery,
  sessionClients,
  sessionCount,
  sessionPage,
  sortKindOf,
  statusHistoryOf,
} from './queries.ts';
import type { SessionDetail } from './results.ts';
import { triageOfSessions } from './session-triage.ts';
import { notifyExpiringSessions } from './retention.ts';
import { shareTokenOf } from './share.ts';

export interface SessionsRequest {
  clientId?: string | undefined;
  status?: SessionStatus | undefined;
  target?: string | undefined;
  search?: string | undefined;
  sort?: SessionSort | undefined;
  order?: 'asc' | 'desc' | undefined;
  uploadedFrom?: string | undefined;
  uploadedTo?: string | undefined;
  limit?: number | undefined;
  cursor?: string | undefined;
}

type Position = NonNullable<SessionPageQuery['after']>;

/** 9999-12-31T23:59:59.999Z: later (or negative) years are outside what we ever write, and PostgreSQL refuses some of them. */
const MAX_TIME = 253_402_300_799_999;
/** Marks a cursor of any order but the default one (newest upload first). */
const SORTED = 's';

const invalidCursor = () => new DomainError('invalid.cursor', 'Invalid cursor');
const validTime = (v: unknown) => isIsoInstant(v) && Date.parse(v) >= 0 && Date.parse(v) <= MAX_TIME;
const validClient = (v: unknown) => typeof v === 'string' && v.length <= 1024 && storable(v);

/**
 * Keyset cursor, opaque to clients. Newest upload first (the default): (uploaded_at,
 * session_id, client_id), as portals before sorting wrote it. Any other order: its sort and
 * direction, the row's sort key, session id and client id; it only continues that order.
 * The client id is part of both because one session id may exist under several clients
 * with the same sort key: without it a page boundary between them would skip one.
 */
function cursorOf(sort: SessionSort, order: 'asc' | 'desc', key: unknown, sessionId: string, clientId: string) {
  return encodeCursor(
    sort === 'uploaded_at' && order === 'desc'
      ? [(key as Date).toISOString(), sessionId, clientId]
      : [SORTED, sort, order, key instanceof Date ? key.toISOString() : key, sessionId, clientId],
  );
}

function decodeCursor(cursor: string, sort: SessionSort, order: 'asc' | 'desc'): Position {
  // Only the form encodeCursor writes (domain/cursor.ts).
  const parts = cursorFields(cursor);
  if (parts === null) throw invalidCursor();
  if (sort === 'uploaded_at' && order === 'desc') {
    // Only what encodeCursor produces: a real instant, a valid session id and a client id
    // PostgreSQL can store (no NUL or other text that would fail there with a 500). A
    // cursor of a portal before docs/api.md#ids-are-per-client has no client id; it pages as it did then.
    const [at, id, client, ...rest] = parts;
    if (!validTime(at) || !isValidSessionId(id) || rest.length > 0) throw invalidCursor();
    if (client !== undefined && !validClient(client)) throw invalidCursor();
    return { key: new Date(String(at)), sessionId: id, clientId: (client as string | undefined) ?? null };
  }
  const [mark, cSort, cOrder, key, id, client, ...rest] = parts;
  if (mark !== SORTED || cSort !== sort || cOrder !== order || rest.length > 0) throw invalidCursor();
  if (!isValidSessionId(id) || !validClient(client)) throw invalidCursor();
  const kind = sortKindOf(sort);
  const keyOk =
    kind === 'time'
      ? validTime(key)
      : kind === 'number'
        ? typeof key === 'number' && Number.isFinite(key)
        : typeof key === 'string' && key.length <= 1024 && storable(key);
  if (!keyOk) throw invalidCursor();
  return { key: key as string | number, sessionId: id, clientId: client as string };
}

function instantOf(v: string | undefined, name: string): Date | undefined {
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime()) || d.getTime() < 0 || d.getTime() > MAX_TIME)
    throw new DomainError('invalid.request', `${name} must be an ISO 8601 date-time`);
  return d;
}

export interface SessionListing {
  sessions: SessionView[];
  next_cursor: string | null;
  total: number;
}

/**
 * A user's listing: newest upload first unless `sort`/`order` say otherwise, 50 a page
 * unless `limit` says otherwise, with the number of matching sessions over every page. A
 * named client outside the user's scope is refused. Listing is also where `report_expiring`
 * fires.
 */
export async function listSessionsFor(
  ctx: AppContext,
  user: UserPrincipal,
  q: SessionsRequest,
): Promise<SessionListing> {
  if (q.clientId !== undefined && !inScope(user, q.clientId))
    throw new DomainError('forbidden.client', 'Access to this client is not allowed');
  const sort = q.sort ?? 'uploaded_at';
  const order = q.order ?? 'desc';
  const limit = q.limit ?? 50;
  const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor, sort, order);
  const filter: SessionFilterQuery = {
    clientIds: user.clientIds,
    clientId: q.clientId,
    status: q.status,
    target: q.target,
    search: q.search,
    uploadedFrom: instantOf(q.uploadedFrom, 'uploaded_from'),
    uploadedTo: instantOf(q.uploadedTo, 'uploaded_to'),
  };
  await notifyExpiringSessions(ctx);
  const none = { sessions: [], next_cursor: null, total: 0 };
  if (user.clientIds !== null && user.clientIds.length === 0) return none;
  // No stored target holds what PostgreSQL cannot store; asking it would be a 500.
  if ([q.target, q.search].some((v) => v !== undefined && !storable(v))) return none;
  const [rows, total] = await Promise.all([
    sessionPage(ctx.db, { ...filter, sort, order, after, limit: limit + 1 }),
    sessionCount(ctx.db, filter),
  ]);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const triage = await triageOfSessions(ctx.db, page, ctx.now().toISOString().slice(0, 10));
  return {
    sessions: page.map((r) =>
      presentSession(
        r,
        // No share_tokens row (revoked): no link; else its sealed copy opened (share-seal.ts).
        r.token_hash === null ? null : ctx.shareTokens.open({ ...r, token_hash: r.token_hash }),
        ctx.config.baseUrl,
        triage(r),
      ),
    ),
    next_cursor:
      rows.length > limit && last ? cursorOf(sort, order, last.sort_key, last.session_id, last.client_id) : null,
    total,
  };
}

/** The clients of the sessions the user may see, for a client picker. */
export async function sessionClientsFor(ctx: AppContext, user: UserPrincipal): Promise<SessionClientsResponse> {
  if (user.clientIds !== null && user.clientIds.length === 0) return { clients: [] };
  const rows = await sessionClients(ctx.db, user.clientIds);
  return {
    clients: rows.map((r) => ({ client_id: clientIdOut(r.client_id), client: r.client, sessions: Number(r.sessions) })),
  };
}

/** One session in the user's scope with its share token, status history and notes (docs/api.md#sessions, docs/api.md#ids-are-per-client). */
export async function sessionDetail(
  ctx: AppContext,
  user: UserPrincipal,
  sessionId: string,
  clientId: string | undefined,
): Promise<SessionDetail> {
  const row = await resolveSession(ctx, user.clientIds, sessionId, clientId);
  const ref = { clientId: row.client_id, sessionId };
  const [shareToken, history, notes, triage] = await Promise.all([
    shareTokenOf(ctx.db, ctx.shareTokens, ref),
    statusHistoryOf(ctx.db, ref),
    notesOf(ctx.db, ref),
    triageOfSessions(ctx.db, [row], ctx.now().toISOString().slice(0, 10)),
  ]);
  return { row, shareToken, history, notes, triage: triage(row) };
}
